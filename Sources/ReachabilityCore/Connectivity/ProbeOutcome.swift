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
    /// The step that failed, where the check knows it; nil: the kind's own (`failedStage`).
    public var stage: ProbeStage?

    public init(_ kind: Kind, _ message: String, stage: ProbeStage? = nil) {
        self.kind = kind; self.message = message; self.stage = stage
    }

    /// The step that failed: the one the check named, else what the kind implies (a DNS failure
    /// is the resolver's, a TLS failure the handshake's); nil for a check that could not run.
    public var failedStage: ProbeStage? {
        if let stage { return stage }
        switch kind {
        case .dnsFailure: return .resolve
        case .tls: return .tls
        case .refused, .unreachable: return .connect
        case .timeout, .reset, .malformed: return .request
        case .unsupported, .other: return nil
        }
    }

    /// This failure, with `stage` unless it already names one.
    public func at(_ stage: ProbeStage) -> ProbeFailure {
        var failure = self
        if failure.stage == nil { failure.stage = stage }
        return failure
    }

    public var description: String { message }
}
