/// One D-Bus value, decoded without knowing in advance what the peer sent.
///
/// The sd-bus adapter in ReachabilityLinux reads every message into this tree, so the logic that
/// interprets ModemManager's answers stays pure and testable here, and a peer that answers with
/// the wrong signature produces values that simply do not match (and are ignored) instead of
/// failing reads halfway through a message.
public indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor (`h`); only its index in the message, never used.
    case unixFD(Int32)
    /// `a…`; a dictionary is an array of `dictEntry`.
    case array([DBusValue])
    /// `{…}`, an element of a dictionary array.
    case dictEntry(DBusValue, DBusValue)
    /// `(…)`.
    case structure([DBusValue])
    /// `v`.
    case variant(DBusValue)

    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        if case let .variant(inner) = self { return inner.unwrapped }
        return self
    }

    /// A `s`, or nil.
    public var string: String? {
        if case let .string(value) = unwrapped { return value }
        return nil
    }

    /// An `o`, or nil.
    public var objectPath: String? {
        if case let .objectPath(value) = unwrapped { return value }
        return nil
    }

    /// A `u`, or nil.
    public var uint32: UInt32? {
        if case let .uint32(value) = unwrapped { return value }
        return nil
    }

    /// An `i`, or nil.
    public var int32: Int32? {
        if case let .int32(value) = unwrapped { return value }
        return nil
    }

    /// A `b`, or nil.
    public var bool: Bool? {
        if case let .bool(value) = unwrapped { return value }
        return nil
    }

    /// An array's elements, or nil.
    public var elements: [DBusValue]? {
        if case let .array(values) = unwrapped { return values }
        return nil
    }

    /// A structure's fields, or nil.
    public var fields: [DBusValue]? {
        if case let .structure(values) = unwrapped { return values }
        return nil
    }

    /// An `a{s…}` or `a{o…}` as a dictionary; nil when this is not an array of dictionary entries
    /// with string-like keys. An empty array is an empty dictionary.
    public var dictionary: [String: DBusValue]? {
        guard let elements else { return nil }
        var result: [String: DBusValue] = [:]
        for element in elements {
            guard case let .dictEntry(key, value) = element else { return nil }
            switch key {
            case let .string(name), let .objectPath(name): result[name] = value
            case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .signature,
                 .unixFD, .array, .dictEntry, .structure, .variant:
                return nil
            }
        }
        return result
    }
}
