/// wpa_supplicant's interfaces as reachd reads them. wpa_supplicant has no ObjectManager: the
/// main object's `Interfaces`, each interface's properties (`Ifname`, `State`, `CurrentBSS`)
/// and its current BSS's (`SSID` and `BSSID` as bytes, `Frequency` q, `Signal` n) come from
/// `Properties.GetAll`, then `PropertiesChanged` and `InterfaceAdded`/`InterfaceRemoved`; the
/// signal and rate from `SignalPoll` (`rssi`, `linkspeed` in Mbit/s). Pure: the sd-bus source
/// asks for what `wanted` names and feeds the answers.
public struct WPASupplicantModel: Equatable, Sendable {
    public static let service = "fi.w1.wpa_supplicant1"
    public static let path = "/fi/w1/wpa_supplicant1"
    public static let mainInterface = "fi.w1.wpa_supplicant1"
    public static let interfaceInterface = "fi.w1.wpa_supplicant1.Interface"
    public static let bssInterface = "fi.w1.wpa_supplicant1.BSS"

    public var mirror = DBusObjectMirror()
    /// A `SignalPoll` answer and the BSS it was read on.
    public struct Poll: Equatable, Sendable {
        public var bss: String
        public var values: [String: DBusValue]
    }

    /// Interface path → its last `SignalPoll` answer.
    public private(set) var polls: [String: Poll] = [:]
    /// The interfaces that reached `completed` and have not been disconnected since: a
    /// reassociation (`associating` … `completed` again, to another BSS) is a roam of a
    /// connection, not its loss, as iwd's `roaming` is.
    public private(set) var established: Set<String> = []

    public init() {}

    public mutating func reset() {
        mirror.reset()
        polls = [:]
        established = []
    }

    /// Stores a `Properties.GetAll` answer (`DBusObjectMirror.apply(getAll:path:interface:)`).
    @discardableResult
    public mutating func apply(getAll arguments: [DBusValue], path: String, interface: String) -> Bool {
        defer { settle(path) }
        return mirror.apply(getAll: arguments, path: path, interface: interface)
    }

    /// Notes whether the interface at `path` has an established connection after a change.
    mutating func settle(_ path: String) {
        switch WiFiLinkState(wpaSupplicantState: mirror[path, Self.interfaceInterface]?["State"]?.string) {
        case .connected, .roaming: established.insert(path)
        case .connecting: break
        case .disconnected, .unmanaged: established.remove(path)
        }
    }

    /// The objects whose properties are not known yet: the main object, the interfaces it lists,
    /// each interface's current BSS. (path, D-Bus interface) pairs for `GetAll`.
    public var wanted: [(path: String, interface: String)] {
        guard let main = mirror[Self.path, Self.mainInterface] else { return [(Self.path, Self.mainInterface)] }
        var result: [(path: String, interface: String)] = []
        for path in main["Interfaces"]?.elements?.compactMap(\.objectPath) ?? [] {
            guard let interface = mirror[path, Self.interfaceInterface] else {
                result.append((path, Self.interfaceInterface))
                continue
            }
            if let bss = interface["CurrentBSS"]?.objectPath, bss != "/", mirror[bss, Self.bssInterface] == nil {
                result.append((bss, Self.bssInterface))
            }
        }
        return result
    }

    /// Applies `InterfaceAdded` (`oa{sv}`), `InterfaceRemoved` (`o`) of the main object, and
    /// `PropertiesChanged` of any object; false for another signal or shape.
    @discardableResult
    public mutating func apply(signal member: String, path: String, arguments: [DBusValue]) -> Bool {
        switch member {
        case "InterfaceAdded":
            guard arguments.count == 2, let added = arguments[0].objectPath, let properties = arguments[1].dictionary else { return false }
            mirror.set(properties, path: added, interface: Self.interfaceInterface)
            settle(added)
            return true
        case "InterfaceRemoved":
            guard arguments.count == 1, let removed = arguments[0].objectPath else { return false }
            mirror.remove(path: removed)
            polls[removed] = nil
            established.remove(removed)
            return true
        case "PropertiesChanged":
            // Only the standard signal: the interfaces' own deprecated one says the same.
            guard arguments.count == 3 else { return false }
            defer { settle(path) }
            return mirror.apply(signal: member, path: path, arguments: arguments)
        default:
            return false
        }
    }

    /// Stores a `SignalPoll` answer (its `a{sv}`, in a variant as wpa_supplicant sends it) for
    /// the interface at `path`; an error (nil) forgets the last one.
    public mutating func apply(signalPoll arguments: [DBusValue]?, path: String) {
        guard let arguments, arguments.count == 1, let values = arguments[0].dictionary,
              let bss = mirror[path, Self.interfaceInterface]?["CurrentBSS"]?.objectPath else {
            polls[path] = nil
            return
        }
        polls[path] = Poll(bss: bss, values: values)
    }

    /// The interfaces whose state is `completed`: whose signal is worth polling.
    public var connectedInterfaces: [String] {
        mirror.objects.compactMap { path, interfaces in
            WiFiLinkState(wpaSupplicantState: interfaces[Self.interfaceInterface]?["State"]?.string).isConnected ? path : nil
        }.sorted()
    }

    /// What wpa_supplicant says of each interface, by interface name.
    public var claims: [String: WiFiOwnerClaim] {
        var result: [String: WiFiOwnerClaim] = [:]
        let listed = Set(mirror[Self.path, Self.mainInterface]?["Interfaces"]?.elements?.compactMap(\.objectPath) ?? [])
        for (path, interfaces) in mirror.objects where listed.contains(path) {
            guard let interface = interfaces[Self.interfaceInterface], let name = interface["Ifname"]?.string, !name.isEmpty else { continue }
            var state = WiFiLinkState(wpaSupplicantState: interface["State"]?.string ?? "unknown")
            if state == .connecting && established.contains(path) { state = .roaming }
            var station: WiFiStation?
            if state.isConnected, let bssPath = interface["CurrentBSS"]?.objectPath, bssPath != "/",
               let bss = mirror[bssPath, Self.bssInterface] {
                let poll = polls[path].flatMap { $0.bss == bssPath ? $0.values : nil } ?? [:]
                station = WiFiStation(owner: .wpaSupplicant,
                                      ssid: bss["SSID"]?.bytes.map { WiFiSSID(bytes: $0) },
                                      bssid: bss["BSSID"]?.bytes.flatMap { WiFiBSSID(bytes: $0) },
                                      frequencyMHz: bss["Frequency"]?.integer ?? poll["frequency"]?.integer,
                                      signalDbm: (poll["rssi"]?.integer ?? bss["Signal"]?.integer).map(Double.init),
                                      txBitrateKbps: poll["linkspeed"]?.integer.map { $0 * 1000 })
            }
            result[name] = WiFiOwnerClaim(owner: .wpaSupplicant, state: state, station: station)
        }
        return result
    }
}
