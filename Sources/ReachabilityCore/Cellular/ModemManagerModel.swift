/// ModemManager's D-Bus names and the enum values reachd reads (ModemManager-enums.h).
public enum ModemManagerDBus {
    public static let service = "org.freedesktop.ModemManager1"
    /// The ObjectManager; modems are `/org/freedesktop/ModemManager1/Modem/N` below it.
    public static let path = "/org/freedesktop/ModemManager1"
    public static let modemInterface = "org.freedesktop.ModemManager1.Modem"
    public static let modem3gppInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
    public static let modemCdmaInterface = "org.freedesktop.ModemManager1.Modem.ModemCdma"
    /// Extended signal figures (`RadioSignal`), per technology.
    public static let signalInterface = "org.freedesktop.ModemManager1.Modem.Signal"
    /// Bearers (`/org/freedesktop/ModemManager1/Bearer/N`) are not ObjectManager objects: their
    /// properties come from `Properties.GetAll` and `PropertiesChanged`.
    public static let bearerInterface = "org.freedesktop.ModemManager1.Bearer"

    /// `MM_MODEM_PORT_TYPE_NET`: a port of this type is a network interface.
    public static let portTypeNet: UInt32 = 2
    /// `MM_MODEM_3GPP_REGISTRATION_STATE_ROAMING` (5), `…_ROAMING_SMS_ONLY` (7),
    /// `…_ROAMING_CSFB_NOT_PREFERRED` (10).
    public static let roaming3gppRegistrationStates: Set<UInt32> = [5, 7, 10]
    /// `MM_MODEM_CDMA_REGISTRATION_STATE_ROAMING`.
    public static let roamingCdmaRegistrationState: UInt32 = 3
}

/// What reachd knows of ModemManager's objects, fed with decoded D-Bus messages, and the
/// `[ModemState]` that follows from it. Pure: the sd-bus source feeds it, tests feed it directly.
///
/// Values of the wrong type (a peer answering garbage) are ignored as if absent; a message of the
/// wrong shape is rejected as a whole (the `apply` methods return false) and changes nothing.
public struct ModemManagerModel: Equatable, Sendable {
    public typealias Properties = [String: DBusValue]

    /// Managed objects, mirrored from the ObjectManager and its signals.
    public private(set) var mirror = DBusObjectMirror()
    /// Bearer properties by bearer path, for the bearers that modems list.
    public private(set) var bearers: [String: Properties] = [:]

    public init() {}

    /// Managed objects: path → interface → property → value.
    public var objects: [String: [String: Properties]] { mirror.objects }

    /// Forgets everything (ModemManager went away).
    public mutating func reset() {
        mirror.reset()
        bearers = [:]
    }

    /// Replaces everything with the arguments of an ObjectManager `GetManagedObjects` reply
    /// (`a{oa{sa{sv}}}`). A reply of the wrong shape empties the model and returns false.
    @discardableResult
    public mutating func apply(managedObjects arguments: [DBusValue]) -> Bool {
        bearers = [:]
        return mirror.apply(managedObjects: arguments)
    }

    /// Applies a signal from ModemManager: ObjectManager `InterfacesAdded` (`oa{sa{sv}}`),
    /// `InterfacesRemoved` (`oas`), or Properties `PropertiesChanged` (`sa{sv}as`) on a modem or
    /// bearer. Returns false for a signal it does not know or of the wrong shape.
    @discardableResult
    public mutating func apply(signal member: String, path: String, arguments: [DBusValue]) -> Bool {
        if member == "PropertiesChanged", arguments.count == 3, arguments[0].string == ModemManagerDBus.bearerInterface {
            // Bearers are no ObjectManager objects: kept apart, for the bearers modems list.
            guard let changed = arguments[1].dictionary, let invalidated = arguments[2].elements else { return false }
            guard bearers[path] != nil else { return true }   // not one of ours (yet)
            bearers[path]?.merge(changed) { _, new in new }
            for name in invalidated.compactMap(\.string) { bearers[path]?[name] = nil }
            return true
        }
        guard mirror.apply(signal: member, path: path, arguments: arguments) else { return false }
        if member != "PropertiesChanged" || arguments[0].string == ModemManagerDBus.modemInterface { pruneBearers() }
        return true
    }

    /// Stores a bearer's properties from a `Properties.GetAll` reply (`a{sv}`). A failed or
    /// malformed reply (nil) records the bearer with no properties, so it is not asked again.
    public mutating func apply(bearer path: String, getAllReply arguments: [DBusValue]?) {
        guard referencedBearers.contains(path) else { return }
        if let arguments, arguments.count == 1, let properties = arguments[0].dictionary {
            bearers[path] = properties
        } else {
            bearers[path] = [:]
        }
    }

    /// Bearer paths that modems list, in order.
    public var referencedBearers: [String] {
        var paths: [String] = []
        for path in modemPaths {
            for bearer in objects[path]?[ModemManagerDBus.modemInterface]?["Bearers"]?.elements?.compactMap(\.objectPath) ?? []
            where !paths.contains(bearer) {
                paths.append(bearer)
            }
        }
        return paths
    }

    /// Bearers that modems list and whose properties are not known yet: the source asks for them.
    public var unknownBearers: [String] {
        referencedBearers.filter { bearers[$0] == nil }
    }

    /// The objects that are modems, in ModemManager's numbering order (Modem/2 before Modem/10).
    public var modemPaths: [String] {
        objects.keys.filter { objects[$0]?[ModemManagerDBus.modemInterface] != nil }.sorted(by: Self.pathOrder)
    }

    /// Every modem as the classifier sees it.
    public var modems: [ModemState] {
        modemPaths.compactMap { path in
            guard let interfaces = objects[path], let modem = interfaces[ModemManagerDBus.modemInterface] else { return nil }
            var names: [String] = []
            for port in modem["Ports"]?.elements ?? [] {
                guard let fields = port.fields, fields.count == 2, let name = fields[0].string,
                      fields[1].uint32 == ModemManagerDBus.portTypeNet, !name.isEmpty, !names.contains(name) else { continue }
                names.append(name)
            }
            for bearerPath in modem["Bearers"]?.elements?.compactMap(\.objectPath) ?? [] {
                guard let bearer = bearers[bearerPath], bearer["Connected"]?.bool != false,
                      let name = bearer["Interface"]?.string, !name.isEmpty, !names.contains(name) else { continue }
                names.append(name)
            }
            let signal = modem["SignalQuality"]?.fields.flatMap { fields in fields.first?.uint32.map(Int.init) }
            return ModemState(path: path, interfaces: names,
                              accessTechnologies: modem["AccessTechnologies"]?.uint32 ?? 0,
                              signalQuality: signal, roaming: Self.roaming(interfaces),
                              signal: interfaces[ModemManagerDBus.signalInterface].flatMap(RadioSignal.init(modemManagerSignal:)))
        }
    }

    /// Roaming from the 3GPP registration state, else from the CDMA ones; nil when no interface says.
    static func roaming(_ interfaces: [String: Properties]) -> Bool? {
        var states: [Bool] = []
        if let state = interfaces[ModemManagerDBus.modem3gppInterface]?["RegistrationState"]?.uint32 {
            states.append(ModemManagerDBus.roaming3gppRegistrationStates.contains(state))
        }
        if let cdma = interfaces[ModemManagerDBus.modemCdmaInterface] {
            for key in ["Cdma1xRegistrationState", "EvdoRegistrationState"] {
                if let state = cdma[key]?.uint32 { states.append(state == ModemManagerDBus.roamingCdmaRegistrationState) }
            }
        }
        return states.isEmpty ? nil : states.contains(true)
    }

    /// Drops bearers that no modem lists any more.
    private mutating func pruneBearers() {
        let referenced = Set(referencedBearers)
        bearers = bearers.filter { referenced.contains($0.key) }
    }

    /// Path order with a numeric last component compared as a number.
    static func pathOrder(_ a: String, _ b: String) -> Bool {
        func split(_ path: String) -> (String, Int?) {
            guard let slash = path.lastIndex(of: "/") else { return (path, nil) }
            return (String(path[..<slash]), Int(path[path.index(after: slash)...]))
        }
        let (pa, na) = split(a), (pb, nb) = split(b)
        if pa == pb, let na, let nb, na != nb { return na < nb }
        return a < b
    }
}
