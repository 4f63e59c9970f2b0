/// `[Metrics] Listen=`: an IP address literal and a port, `127.0.0.1:9464` or `[::1]:9464`.
/// Names are not accepted: what the daemon binds must not depend on a resolver at start.
public struct MetricsListenAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
    public enum Family: Equatable, Hashable, Sendable { case ipv4, ipv6 }

    /// The address without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, `::`).
    public let host: String
    public let port: Int
    public let family: Family
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public let addressBytes: [UInt8]

    /// Why a value is not an address and port.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let problem: String
        public var description: String { problem }
    }

    public init(_ text: String) throws(ParseError) {
        let hostPart: Substring, portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw ParseError(problem: "bad address: missing ']'") }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ParseError(problem: "missing port") }
            portPart = rest.dropFirst()
            guard let bytes = HostName.ipv6Bytes(String(hostPart)) else { throw ParseError(problem: "bad IPv6 address '\(hostPart)'") }
            family = .ipv6
            addressBytes = bytes
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw ParseError(problem: "missing port") }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") { throw ParseError(problem: "an IPv6 address needs brackets, e.g. [::1]:9464") }
            guard let bytes = HostName.ipv4Bytes(String(hostPart)) else { throw ParseError(problem: "bad IPv4 address '\(hostPart)'") }
            family = .ipv4
            addressBytes = bytes
        }
        guard !portPart.isEmpty, portPart.utf8.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portPart), (1...65_535).contains(port) else {
            throw ParseError(problem: "bad port '\(portPart)', not 1 to 65535")
        }
        host = String(hostPart)
        self.port = port
    }

    public var description: String {
        switch family {
        case .ipv4: return "\(host):\(port)"
        case .ipv6: return "[\(host)]:\(port)"
        }
    }
}
