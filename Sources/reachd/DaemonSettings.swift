import ReachabilityLinux
import ReachabilityServer

/// What the daemon runs with: the monitor's configuration and the server's.
///
/// SEAM for the configuration helper: `load(configPath:)` returns the built-in defaults for now.
/// The config parser (ReachabilityCore, `/etc/reachd/reachd.conf` + `reachd.conf.d/*.conf`)
/// replaces its body and fills these fields; `--check-config` and SIGHUP use the same call.
struct DaemonSettings {
    var monitor = ReachabilityMonitor.Configuration()
    var server = ReachabilityServer.Configuration()
    /// `[Socket] Path=`; `--socket` and REACHD_SOCKET win over it.
    var socketPath: String?

    /// Loads the configuration (`configPath` or the default files). Throws a message naming
    /// file, line and key when it is bad.
    static func load(configPath: String?) throws -> DaemonSettings {
        DaemonSettings()
    }
}
