/// A service's objects as reachd knows them: path → interface → property → value, from an
/// ObjectManager's `GetManagedObjects`, `Properties.GetAll` answers, and the signals that follow
/// (`InterfacesAdded`, `InterfacesRemoved`, `PropertiesChanged`). Pure: the sd-bus sources feed
/// it decoded messages. A message of the wrong shape changes nothing (`apply` returns false);
/// values of the wrong type are kept and read as absent by whoever looks.
public struct DBusObjectMirror: Equatable, Sendable {
    public typealias Properties = [String: DBusValue]

    /// path → interface → properties.
    public private(set) var objects: [String: [String: Properties]] = [:]

    public init() {}

    public mutating func reset() { objects = [:] }

    /// The properties of `interface` at `path`, when known.
    public subscript(path: String, interface: String) -> Properties? {
        objects[path]?[interface]
    }

    /// Replaces everything with a `GetManagedObjects` reply (`a{oa{sa{sv}}}`); false (and
    /// nothing known) when it has another shape.
    @discardableResult
    public mutating func apply(managedObjects arguments: [DBusValue]) -> Bool {
        reset()
        guard arguments.count == 1, let tree = arguments[0].dictionary else { return false }
        var parsed: [String: [String: Properties]] = [:]
        for (path, value) in tree {
            guard let interfaces = Self.interfaces(value) else { return false }
            parsed[path] = interfaces
        }
        objects = parsed
        return true
    }

    /// Stores a `Properties.GetAll` answer (`a{sv}`) for `interface` at `path`; false for
    /// another shape.
    @discardableResult
    public mutating func apply(getAll arguments: [DBusValue], path: String, interface: String) -> Bool {
        guard arguments.count == 1, let properties = arguments[0].dictionary else { return false }
        objects[path, default: [:]][interface] = properties
        return true
    }

    /// Stores `properties` for `interface` at `path` (an `InterfaceAdded` of a service without
    /// an ObjectManager).
    public mutating func set(_ properties: Properties, path: String, interface: String) {
        objects[path, default: [:]][interface] = properties
    }

    /// Forgets the object at `path` and every object below it.
    public mutating func remove(path: String) {
        objects = objects.filter { $0.key != path && !$0.key.hasPrefix(path + "/") }
    }

    /// Applies `InterfacesAdded` (`oa{sa{sv}}`), `InterfacesRemoved` (`oas`) or
    /// `PropertiesChanged` (`sa{sv}as`, kept only for an interface the object is known to
    /// have); false for another signal or shape.
    @discardableResult
    public mutating func apply(signal member: String, path: String, arguments: [DBusValue]) -> Bool {
        switch member {
        case "InterfacesAdded":
            guard arguments.count == 2, let objectPath = arguments[0].objectPath,
                  let added = Self.interfaces(arguments[1]) else { return false }
            objects[objectPath, default: [:]].merge(added) { _, new in new }
            return true
        case "InterfacesRemoved":
            guard arguments.count == 2, let objectPath = arguments[0].objectPath,
                  let names = arguments[1].elements?.compactMap(\.string),
                  names.count == arguments[1].elements?.count else { return false }
            for name in names { objects[objectPath]?[name] = nil }
            if objects[objectPath]?.isEmpty == true { objects[objectPath] = nil }
            return true
        case "PropertiesChanged":
            guard arguments.count == 3, let interface = arguments[0].string,
                  let changed = arguments[1].dictionary, let invalidated = arguments[2].elements else { return false }
            guard objects[path]?[interface] != nil else { return true }
            objects[path]?[interface]?.merge(changed) { _, new in new }
            for name in invalidated.compactMap(\.string) { objects[path]?[interface]?[name] = nil }
            return true
        default:
            return false
        }
    }

    /// `a{sa{sv}}` → interface → properties; nil when the shape is wrong.
    static func interfaces(_ value: DBusValue) -> [String: Properties]? {
        guard let byInterface = value.dictionary else { return nil }
        var result: [String: Properties] = [:]
        for (name, properties) in byInterface {
            guard let dictionary = properties.dictionary else { return nil }
            result[name] = dictionary
        }
        return result
    }
}

extension DBusValue {
    /// An `ay` as bytes, or nil (any element not a byte).
    public var bytes: [UInt8]? {
        guard let elements else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard case let .byte(value) = element.unwrapped else { return nil }
            result.append(value)
        }
        return result
    }

    /// A whole number of any D-Bus integer type, or nil.
    public var integer: Int? {
        switch unwrapped {
        case let .byte(value): Int(value)
        case let .int16(value): Int(value)
        case let .uint16(value): Int(value)
        case let .int32(value): Int(value)
        case let .uint32(value): Int(value)
        case let .int64(value): Int(exactly: value)
        case let .uint64(value): Int(exactly: value)
        case .bool, .double, .string, .objectPath, .signature, .unixFD, .array, .dictEntry, .structure, .variant: nil
        }
    }
}
