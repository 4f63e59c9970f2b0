/// How a host check's failure goes on the wire.
extension HostCheckError {
    /// `org.varlink.service.InvalidParameter(parameter:)` for a malformed host or port,
    /// `io.reachd.Reachability.HostNotFound(host:)` for a name that does not resolve,
    /// `io.reachd.Reachability.Busy(retryAfterMs:)` when no look-up can be started now.
    public var varlinkError: VarlinkError {
        switch self {
        case let .invalidParameter(parameter, _): return .invalidParameter(parameter)
        case let .hostNotFound(host, _): return .hostNotFound(host)
        case .busy: return .busy(retryAfterMs: Self.busyRetryAfterMs)
        }
    }

    /// What a caller told `Busy` waits before it tries again.
    public static let busyRetryAfterMs = 1000
}
