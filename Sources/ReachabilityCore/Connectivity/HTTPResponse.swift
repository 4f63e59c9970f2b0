/// An HTTP response as the probe received it.
public struct HTTPResponse: Equatable, Sendable {
    /// One header line, name as sent.
    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) { self.name = name; self.value = value }
    }

    public var status: Int
    public var reason: String
    public var headers: [Header]
    /// The body, de-chunked; at most the parser's cap.
    public var body: [UInt8]
    /// True when the body was longer than the cap and the rest was not read.
    public var bodyTruncated: Bool

    public init(status: Int, reason: String = "", headers: [Header] = [], body: [UInt8] = [], bodyTruncated: Bool = false) {
        self.status = status; self.reason = reason; self.headers = headers
        self.body = body; self.bodyTruncated = bodyTruncated
    }

    /// The first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
