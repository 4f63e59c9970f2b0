import ReachabilityCore
import ReachabilitySystem

/// What can go wrong talking to reachd.
public enum ReachabilityClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No daemon answers at the path: no socket file, or nobody listening on it.
    case daemonNotRunning(socketPath: String)
    /// The socket exists but cannot be used (permissions, a path too long, …): the path and
    /// the failed call.
    case connectionFailed(socketPath: String, reason: Errno)
    /// The daemon closed the connection (stopped, or dropped this client).
    case connectionClosed
    /// No reply within the call's timeout.
    case timedOut
    /// The daemon sent something that is not the expected varlink reply.
    case protocolError(String)
    /// The daemon answered with a varlink error (`io.reachd.Reachability.ProbeDisabled`, …).
    case remote(VarlinkError)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path): return "reachd is not running (no socket at \(path))"
        case .connectionFailed(let path, let reason): return "cannot connect to \(path): \(reason.text)"
        case .connectionClosed: return "reachd closed the connection"
        case .timedOut: return "reachd did not answer in time"
        case .protocolError(let detail): return "unexpected reply from reachd: \(detail)"
        case .remote(let error): return "reachd: \(error)"
        }
    }
}
