/// NetworkManager's D-Bus names that reachd reads for the metered guess.
public enum NetworkManagerDBus {
    public static let service = "org.freedesktop.NetworkManager"
    /// Where NetworkManager's ObjectManager lives (its root, not `/org/freedesktop/NetworkManager`).
    public static let objectManagerPath = "/org/freedesktop"
    public static let devicesPath = "/org/freedesktop/NetworkManager/Devices"
    public static let deviceInterface = "org.freedesktop.NetworkManager.Device"
}

/// What NetworkManager says about the cost of each of its devices: the `Metered` property
/// (`NMMetered`) of `org.freedesktop.NetworkManager.Device`, by interface name, kept from its
/// ObjectManager's `GetManagedObjects` and the signals that follow. Pure: the sd-bus source in
/// ReachabilityLinux feeds it decoded messages.
public struct NetworkManagerMeteredModel: Equatable, Sendable {
    /// NetworkManager's `NMMetered` values.
    public enum Metered: UInt32, Sendable {
        case unknown = 0, yes = 1, no = 2, guessYes = 3, guessNo = 4
    }

    private typealias Properties = [String: DBusValue]
    /// Device object path → its Device interface's properties.
    private var devices: [String: Properties] = [:]

    public init() {}

    public mutating func reset() { devices = [:] }

    /// The names of the interfaces NetworkManager calls metered (`yes`, or its own guess
    /// `guess-yes`: a phone's `ANDROID_METERED`, a cellular device), sorted.
    public var meteredInterfaces: [String] {
        devices.values.compactMap { properties -> String? in
            guard let name = properties["Interface"]?.string, !name.isEmpty,
                  let raw = properties["Metered"]?.uint32, let metered = Metered(rawValue: raw) else { return nil }
            switch metered {
            case .yes, .guessYes: return name
            case .unknown, .no, .guessNo: return nil
            }
        }.sorted()
    }

    /// Replaces everything with a `GetManagedObjects` reply (`a{oa{sa{sv}}}`); false (and
    /// nothing known) when it has another shape.
    @discardableResult
    public mutating func apply(managedObjects arguments: [DBusValue]) -> Bool {
        reset()
        guard arguments.count == 1, let tree = arguments[0].dictionary else { return false }
        var parsed: [String: Properties] = [:]
        for (path, interfacesValue) in tree {
            guard let interfaces = interfacesValue.dictionary else { return false }
            if let device = interfaces[NetworkManagerDBus.deviceInterface] {
                guard let properties = device.dictionary else { return false }
                parsed[path] = properties
            }
        }
        devices = parsed
        return true
    }

    /// Applies `InterfacesAdded` (`oa{sa{sv}}`), `InterfacesRemoved` (`oas`) or
    /// `PropertiesChanged` (`sa{sv}as`) of a device; false for another signal or shape.
    @discardableResult
    public mutating func apply(signal member: String, path: String, arguments: [DBusValue]) -> Bool {
        switch member {
        case "InterfacesAdded":
            guard arguments.count == 2, let objectPath = arguments[0].objectPath,
                  let interfaces = arguments[1].dictionary else { return false }
            guard let device = interfaces[NetworkManagerDBus.deviceInterface] else { return true }
            guard let properties = device.dictionary else { return false }
            devices[objectPath, default: [:]].merge(properties) { _, new in new }
            return true
        case "InterfacesRemoved":
            guard arguments.count == 2, let objectPath = arguments[0].objectPath,
                  let names = arguments[1].elements else { return false }
            if names.contains(where: { $0.string == NetworkManagerDBus.deviceInterface }) { devices[objectPath] = nil }
            return true
        case "PropertiesChanged":
            guard arguments.count == 3, let interface = arguments[0].string,
                  let changed = arguments[1].dictionary, let invalidated = arguments[2].elements else { return false }
            guard interface == NetworkManagerDBus.deviceInterface, devices[path] != nil else { return true }
            devices[path]?.merge(changed) { _, new in new }
            for name in invalidated.compactMap(\.string) { devices[path]?[name] = nil }
            return true
        default:
            return false
        }
    }
}
