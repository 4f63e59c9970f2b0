import Foundation
import ReachabilityClient

/// Where the library gets its facts from.
public enum ReachabilitySource: Sendable, Equatable, CustomStringConvertible {
    /// reachd when it answers; otherwise the same `ReachabilityMonitor` runs inside the app, and
    /// the library switches to the daemon as soon as its socket answers (polled about every second).
    /// If the daemon goes away later, the library falls back to the in-process monitor again.
    case auto
    /// reachd only. `Reachability.startNotifier()` throws `ReachabilityError.daemonNotRunning`
    /// when no daemon answers; once started, a daemon restart is bridged by reconnecting.
    case daemon
    /// Always in-process: the monitor, with ModemManager and the connectivity check as
    /// `inProcessServices` says.
    case inProcess
    /// A network the app's own tests drive (`SimulatedNetwork`): no daemon, no root.
    case simulated(SimulatedNetwork)

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .daemon: return "daemon"
        case .inProcess: return "inProcess"
        case .simulated(let network): return "\(network)"
        }
    }
}

/// Errors of the `Reachability` module.
public enum ReachabilityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `source: .daemon` and no reachd answers at the socket.
    case daemonNotRunning(socketPath: String)
    /// The socket exists but cannot be used (permissions, …).
    case connectionFailed(socketPath: String, reason: String)
    /// The in-process monitor could not start (netlink socket, namespace): the error's text.
    case unableToStartMonitor(String)
    /// `Reachability(hostname:)` with an empty name.
    case invalidHost(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path): return "reachd is not running (no socket at \(path))"
        case .connectionFailed(let path, let reason): return "cannot connect to reachd at \(path): \(reason)"
        case .unableToStartMonitor(let reason): return "cannot start the in-process reachability monitor: \(reason)"
        case .invalidHost(let host): return "invalid host name \"\(host)\""
        }
    }
}

/// The socket the library talks to: `explicit`, then `REACHD_SOCKET`, then the default paths
/// (`ReachabilitySocketPath`), resolved the same way `reachctl` does.
func resolvedSocketPath(_ explicit: String?) -> String {
    ReachabilitySocketPath.resolve(explicit: explicit)
}
