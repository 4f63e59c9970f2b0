import FoundationEssentials

/// A JSON value of unknown shape: varlink call parameters before a method looks at them, error
/// parameters, and replies that a client passes on without knowing their type.
public enum JSONValue: Encodable, Equatable, Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text with `JSONParser` (linear time, at most `Varlink.maxNesting` deep, no
    /// duplicate keys). Not `Decodable`: decoding by trying each type in turn costs more with
    /// every level of nesting.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParser.Error) {
        self = try JSONParser.parse(bytes)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The value as an object's members, nil for anything else.
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The value as an array's elements, nil for anything else.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// An integer, also from a float without fraction (`5.0`), as some JSON writers send.
    public var intValue: Int? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int(d)
        case .null, .bool, .double, .string, .array, .object: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Decodes a typed value from this JSON value (by a round trip through the wire encoder).
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try WireJSON.decoder().decode(T.self, from: WireJSON.encoder().encode(self))
    }

    /// The JSON value of an encodable value, encoded as on the wire.
    public static func encoding<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValue(parsing: WireJSON.encoder().encode(value))
    }
}
