/// What one HTTP connectivity check came back with: a response, or why there was none.
public enum ProbeOutcome: Equatable, Sendable {
    case response(HTTPResponse)
    case failure(ProbeFailure)
}

/// A check that got no HTTP answer: the kind decides the verdict, the message is shown to users.
public struct ProbeFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// No complete answer within `Timeout=` (connect, request or response).
        case timeout
        /// The server refused the connection (TCP RST to the SYN).
        case refused
        /// The connection was reset or closed before a complete response.
        case reset
        /// The host name did not resolve (or not within the timeout).
        case dnsFailure
        /// No route to the host or network (ENETUNREACH, EHOSTUNREACH).
        case unreachable
        /// The answer was not HTTP/1.x.
        case malformed
        /// TLS failed: the handshake, the certificate (not trusted, another name, expired), or the session.
        case tls
        /// The URL cannot be checked by reachd.
        case unsupported
        /// Anything else (socket errors).
        case other
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }

    public var description: String { message }
}
