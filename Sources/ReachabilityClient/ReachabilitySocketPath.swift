import FoundationEssentials
import ReachabilityCore

/// Where reachd's socket is, for the daemon, `reachctl` and the app library alike.
public enum ReachabilitySocketPath {
    /// The system socket, systemd's convention (`/run/systemd/netif/io.systemd.Network`).
    public static let systemPath = "/run/reachd/" + fileName
    /// The environment variable that overrides the path for daemon and clients.
    public static let environmentVariable = "REACHD_SOCKET"
    /// The socket's file name, the same in every directory: the interface's name.
    public static let fileName = Varlink.reachabilityInterface

    /// `$XDG_RUNTIME_DIR/reachd/io.reachd.Reachability`, where an unprivileged daemon listens.
    public static func userPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return "\(runtime)/reachd/\(fileName)"
    }

    /// Every path `resolve` looks at, in its order: `explicit`, else `REACHD_SOCKET`, else the
    /// system socket and the user one (when `XDG_RUNTIME_DIR` is set). What a client names when
    /// no daemon answers at any of them.
    public static func candidates(explicit: String? = nil,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        if let explicit, !explicit.isEmpty { return [explicit] }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return [fromEnvironment] }
        return [systemPath] + [userPath(environment: environment)].compactMap { $0 }
    }

    /// The path a client connects to: `explicit` (`--socket`), then `REACHD_SOCKET`, then the
    /// system socket if it exists, then the user socket if it exists, else the system path.
    public static func resolve(explicit: String? = nil,
                               environment: [String: String] = ProcessInfo.processInfo.environment,
                               exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        if exists(systemPath) { return systemPath }
        if let user = userPath(environment: environment), exists(user) { return user }
        return systemPath
    }
}
