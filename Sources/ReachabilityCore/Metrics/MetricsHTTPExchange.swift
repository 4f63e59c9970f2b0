/// The HTTP side of `[Metrics] Listen=`, without I/O: what a request's bytes are, and what to
/// answer. The responder serves `GET /metrics` (and `HEAD`) and nothing else, takes no request
/// body, answers one request per connection (`Connection: close`) and refuses a request head over
/// `maxHeadBytes`.
public enum MetricsHTTPExchange {
    /// The largest request head (request line and headers) accepted. Prometheus sends about 300 bytes.
    public static let maxHeadBytes = 8 * 1024
    /// The path served.
    public static let path = "/metrics"

    /// What the bytes read so far amount to.
    public enum Request: Equatable, Sendable {
        /// The head is not complete yet: read on.
        case incomplete
        /// A complete, well-formed request head.
        case complete(method: String, target: String)
        /// Not HTTP/1.x, or a request with a body: answer 400 (or 505) and close.
        case malformed(status: Int, reason: String)
        /// The head is over `maxHeadBytes`: answer 431 and close.
        case headTooLarge
    }

    /// Parses the bytes received so far on a connection.
    public static func parse(_ bytes: [UInt8]) -> Request {
        guard let end = headEnd(bytes) else {
            if bytes.count > maxHeadBytes { return .headTooLarge }
            // Not even the start of a method (a TLS hello, binary junk): refused at once instead
            // of waiting for a line that will never come.
            let method = bytes.prefix { $0 != UInt8(ascii: " ") }
            let plausible = method.count <= 16 && method.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            return plausible ? .incomplete : .malformed(status: 400, reason: "bad request line")
        }
        guard end <= maxHeadBytes else { return .headTooLarge }
        guard let head = String(validating: bytes[..<end], as: UTF8.self) else {
            return .malformed(status: 400, reason: "request head is not UTF-8")
        }
        // "\r\n" is one Character in Swift: split on it as well as on a bare "\n".
        var lines = head.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\r\n" || $0 == "\n" })
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { return .malformed(status: 400, reason: "empty request") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isUppercase }),
              parts[1].hasPrefix("/") || parts[1] == "*" else {
            return .malformed(status: 400, reason: "bad request line")
        }
        guard parts[2].hasPrefix("HTTP/") else { return .malformed(status: 400, reason: "bad request line") }
        guard parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .malformed(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served")
        }
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                return .malformed(status: 400, reason: "bad header line")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces
            if name == "transfer-encoding" || (name == "content-length" && value != "0") {
                return .malformed(status: 400, reason: "a request body is not accepted")
            }
        }
        return .complete(method: String(parts[0]), target: String(parts[1]))
    }

    /// One answer, whole: status line, headers and body.
    public struct Response: Equatable, Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// False for HEAD: `Content-Length` tells the body's size, but it is not sent.
        public var sendsBody: Bool

        public init(status: Int, headers: [(String, String)], body: [UInt8], sendsBody: Bool = true) {
            self.status = status; self.headers = headers; self.body = body; self.sendsBody = sendsBody
        }

        public static func == (a: Response, b: Response) -> Bool {
            a.status == b.status && a.body == b.body && a.sendsBody == b.sendsBody
                && a.headers.map { "\($0.0): \($0.1)" } == b.headers.map { "\($0.0): \($0.1)" }
        }

        /// The bytes to send.
        public var bytes: [UInt8] {
            var head = "HTTP/1.1 \(status) \(MetricsHTTPExchange.reasonPhrase(status))\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            return Array(head.utf8) + (sendsBody ? body : [])
        }
    }

    /// The answer to `request`; `metrics` renders the body, called only for a `GET`/`HEAD` of
    /// `/metrics`. Nil while the request is incomplete.
    public static func respond(to request: Request, metrics: () -> String) -> Response? {
        switch request {
        case .incomplete:
            return nil
        case .headTooLarge:
            return plain(431, "request head over \(maxHeadBytes) bytes\n")
        case let .malformed(status, reason):
            return plain(status, reason + "\n")
        case let .complete(method, target):
            let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
            guard path == Self.path else { return plain(404, "not found; metrics are at \(Self.path)\n", sendsBody: method != "HEAD") }
            guard method == "GET" || method == "HEAD" else {
                var response = plain(405, "only GET and HEAD\n")
                response.headers.append(("Allow", "GET, HEAD"))
                return response
            }
            return Response(status: 200, headers: [("Content-Type", PrometheusExposition.contentType)],
                            body: Array(metrics().utf8), sendsBody: method == "GET")
        }
    }

    /// A short plain-text answer (errors).
    public static func plain(_ status: Int, _ text: String, sendsBody: Bool = true) -> Response {
        Response(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8), sendsBody: sendsBody)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 431: return "Request Header Fields Too Large"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
    }

    /// The index just past the blank line ending the head (`\r\n\r\n` or a bare `\n\n`).
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        let newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        while index < bytes.count {
            if bytes[index] == newline {
                if index + 1 < bytes.count && bytes[index + 1] == newline { return index + 2 }
                if index + 2 < bytes.count && bytes[index + 1] == cr && bytes[index + 2] == newline { return index + 3 }
            }
            index += 1
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return s
    }
}
