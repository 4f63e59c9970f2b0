import FoundationEssentials

/// Varlink's message layer (varlink.org): each message is one JSON object followed by a NUL byte.
/// This file holds the message types and their encoding; `VarlinkFramer` cuts a byte stream into
/// messages. Pure: no sockets here.
public enum Varlink {
    /// The largest message either side accepts (without its NUL). A peer that sends more without a
    /// NUL is cut off, so a broken client cannot make the daemon buffer without bound.
    public static let maxMessageSize = 64 * 1024

    /// How deep the containers (objects, arrays) of a message may nest. reachd's deepest
    /// message, an event, nests 7 (reply, parameters, event, status, interfaces, interface,
    /// addresses); a call nests 3. Deeper is refused as malformed, before it costs anything.
    public static let maxNesting = 16

    /// The standard interface every varlink service implements.
    public static let serviceInterface = "org.varlink.service"
    /// reachd's interface (`InterfaceDescription.reachability`); its socket file has the same name.
    public static let reachabilityInterface = "io.reachd.Reachability"
}

/// A method call: `{"method": "...", "parameters": {...}, "more": true?, "oneway": true?}`.
public struct VarlinkCall: Equatable, Sendable {
    /// Fully qualified: `io.reachd.Reachability.GetStatus`.
    public var method: String
    public var parameters: [String: JSONValue]
    /// The caller accepts several replies (`continues: true` on all but the last).
    public var more: Bool
    /// The caller wants no reply at all.
    public var oneway: Bool
    /// The caller wants to take over the connection for another protocol (not supported by reachd).
    public var upgrade: Bool

    public init(method: String, parameters: [String: JSONValue] = [:], more: Bool = false,
                oneway: Bool = false, upgrade: Bool = false) {
        self.method = method; self.parameters = parameters; self.more = more
        self.oneway = oneway; self.upgrade = upgrade
    }

    /// The interface part of `method` (`io.reachd.Reachability`), empty when there is no dot.
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The member part of `method` (`GetStatus`).
    public var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }
}

/// A reply: `{"parameters": {...}, "continues": true?}` or `{"error": "...", "parameters": {...}}`.
public struct VarlinkReply: Equatable, Sendable {
    public var parameters: [String: JSONValue]
    public var continues: Bool
    /// The qualified error name when the reply is an error.
    public var error: String?

    public init(parameters: [String: JSONValue] = [:], continues: Bool = false, error: String? = nil) {
        self.parameters = parameters; self.continues = continues; self.error = error
    }

    /// Decodes the parameter `key` as `T` (e.g. `Status` from `GetStatus`'s `status`).
    public func decode<T: Decodable>(_ type: T.Type, key: String) throws -> T {
        guard let value = parameters[key] else {
            throw VarlinkProtocolError.missingField(key)
        }
        return try value.decode(T.self)
    }
}

/// A varlink error to send: the qualified name and its parameters.
public struct VarlinkError: Error, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var parameters: [String: JSONValue]

    public init(_ name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name; self.parameters = parameters
    }

    public var description: String {
        guard !parameters.isEmpty, let text = try? WireJSON.string(parameters) else { return name }
        return "\(name) \(text)"
    }

    // The standard errors of org.varlink.service.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError("org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError("org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }
    /// The service failed to answer (a reply it could not encode); not in the varlink spec's
    /// list, the name that varlink services (systemd's) use for it.
    public static let internalError = VarlinkError("org.varlink.service.InternalError")
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError("org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    // The errors of io.reachd.Reachability.
    public static let expectedMore = VarlinkError("\(Varlink.reachabilityInterface).ExpectedMore")
    public static func subscriberTooSlow(dropped: Int) -> VarlinkError {
        VarlinkError("\(Varlink.reachabilityInterface).SubscriberTooSlow", parameters: ["dropped": .int(dropped)])
    }
    public static func hostNotFound(_ host: String) -> VarlinkError {
        VarlinkError("\(Varlink.reachabilityInterface).HostNotFound", parameters: ["host": .string(host)])
    }
    public static let probeDisabled = VarlinkError("\(Varlink.reachabilityInterface).ProbeDisabled")
    /// `Simulate` by a caller who may not.
    public static let permissionDenied = VarlinkError("\(Varlink.reachabilityInterface).PermissionDenied")
    /// A limit against abusive callers is reached (too many look-ups in flight): try again after
    /// `retryAfterMs` milliseconds.
    public static func busy(retryAfterMs: Int) -> VarlinkError {
        VarlinkError("\(Varlink.reachabilityInterface).Busy", parameters: ["retryAfterMs": .int(retryAfterMs)])
    }
}

/// A message that is not varlink: the connection that sent it is closed.
public enum VarlinkProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More than `Varlink.maxMessageSize` bytes without a NUL.
    case messageTooLarge(limit: Int)
    case invalidUTF8
    case malformedJSON(String)
    case notAnObject
    case missingField(String)
    case wrongType(field: String)

    public var description: String {
        switch self {
        case .messageTooLarge(let limit): return "message longer than \(limit) bytes without NUL terminator"
        case .invalidUTF8: return "message is not valid UTF-8"
        case .malformedJSON(let detail): return "message is not valid JSON: \(detail)"
        case .notAnObject: return "message is not a JSON object"
        case .missingField(let field): return "message has no '\(field)'"
        case .wrongType(let field): return "message field '\(field)' has the wrong type"
        }
    }
}

/// Encoding and decoding of single messages (without the NUL; `VarlinkFramer` adds and strips it).
public enum VarlinkCodec {
    // MARK: decoding

    /// Parses bytes into a JSON object with `JSONParser`: linear in the length, at most
    /// `Varlink.maxNesting` deep, no key twice in an object.
    public static func object(from bytes: some Collection<UInt8>) throws -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            if case .invalidUTF8 = error.kind { throw VarlinkProtocolError.invalidUTF8 }
            throw VarlinkProtocolError.malformedJSON(error.description)
        }
        guard case .object(let object) = value else { throw VarlinkProtocolError.notAnObject }
        return object
    }

    /// Decodes a call. A missing `parameters` is an empty object, as the spec allows.
    public static func decodeCall(_ bytes: some Collection<UInt8>) throws -> VarlinkCall {
        let object = try object(from: bytes)
        guard let methodValue = object["method"] else { throw VarlinkProtocolError.missingField("method") }
        guard let method = methodValue.stringValue else { throw VarlinkProtocolError.wrongType(field: "method") }
        return VarlinkCall(method: method,
                           parameters: try parameters(object),
                           more: try flag(object, "more"),
                           oneway: try flag(object, "oneway"),
                           upgrade: try flag(object, "upgrade"))
    }

    /// Decodes a reply or an error reply.
    public static func decodeReply(_ bytes: some Collection<UInt8>) throws -> VarlinkReply {
        let object = try object(from: bytes)
        var error: String?
        if let value = object["error"], !value.isNull {
            guard let name = value.stringValue else { throw VarlinkProtocolError.wrongType(field: "error") }
            error = name
        }
        return VarlinkReply(parameters: try parameters(object), continues: try flag(object, "continues"), error: error)
    }

    private static func parameters(_ object: [String: JSONValue]) throws -> [String: JSONValue] {
        guard let value = object["parameters"], !value.isNull else { return [:] }
        guard let parameters = value.objectValue else { throw VarlinkProtocolError.wrongType(field: "parameters") }
        return parameters
    }

    private static func flag(_ object: [String: JSONValue], _ key: String) throws -> Bool {
        guard let value = object[key], !value.isNull else { return false }
        guard let flag = value.boolValue else { throw VarlinkProtocolError.wrongType(field: key) }
        return flag
    }

    // MARK: encoding

    /// Encodes a call.
    public static func encode(_ call: VarlinkCall) throws -> Data {
        var object: [String: JSONValue] = ["method": .string(call.method)]
        if !call.parameters.isEmpty { object["parameters"] = .object(call.parameters) }
        if call.more { object["more"] = .bool(true) }
        if call.oneway { object["oneway"] = .bool(true) }
        if call.upgrade { object["upgrade"] = .bool(true) }
        return try WireJSON.encoder().encode(object)
    }

    /// Encodes a reply whose parameters are already-encoded JSON (an object): the server encodes
    /// an event once and splices the same bytes into every subscriber's reply.
    public static func encodeReply(parametersJSON: Data, continues: Bool) -> Data {
        var data = Data(continues ? #"{"continues":true,"parameters":"#.utf8 : #"{"parameters":"#.utf8)
        data.append(parametersJSON)
        data.append(UInt8(ascii: "}"))
        return data
    }

    /// Encodes a reply `{"parameters": {key: value}}`.
    public static func encodeReply<T: Encodable>(key: String, value: T, continues: Bool = false) throws -> Data {
        encodeReply(parametersJSON: try encodeParameters(key: key, value: value), continues: continues)
    }

    /// Encodes the parameters object `{key: value}`.
    public static func encodeParameters<T: Encodable>(key: String, value: T) throws -> Data {
        var data = Data("{".utf8)
        data.append(try WireJSON.encoder().encode(key))
        data.append(UInt8(ascii: ":"))
        data.append(try WireJSON.encoder().encode(value))
        data.append(UInt8(ascii: "}"))
        return data
    }

    /// Encodes a reply with plain JSON parameters.
    public static func encodeReply(_ reply: VarlinkReply) throws -> Data {
        var object: [String: JSONValue] = ["parameters": .object(reply.parameters)]
        if let error = reply.error { object["error"] = .string(error) }
        if reply.continues { object["continues"] = .bool(true) }
        return try WireJSON.encoder().encode(object)
    }

    /// Encodes an error reply.
    public static func encode(_ error: VarlinkError) -> Data {
        // Encoding a dictionary of JSONValue cannot fail; fall back to no parameters if it ever did.
        let parameters = (try? WireJSON.encoder().encode(error.parameters)) ?? Data("{}".utf8)
        var data = Data(#"{"error":"#.utf8)
        data.append((try? WireJSON.encoder().encode(error.name)) ?? Data(#""org.varlink.service.InvalidParameter""#.utf8))
        data.append(Data(#","parameters":"#.utf8))
        data.append(parameters)
        data.append(UInt8(ascii: "}"))
        return data
    }
}
