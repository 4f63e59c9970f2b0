import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer

/// What the daemon runs with, derived from reachd.conf (see reachd.conf(5)): the monitor's
/// configuration, the server's, and the socket's path, mode and group.
struct DaemonSettings {
    /// The parsed file, as `--check-config` validated it.
    var file = ReachdConfiguration()
    var monitor = ReachabilityMonitor.Configuration()
    var server = ReachabilityServer.Configuration()
    /// `[Socket] Path=`; `--socket` and REACHD_SOCKET win over it.
    var socketPath: String?
    /// `[Socket] Group=`, applied to a socket file the daemon binds itself.
    var socketGroup: String?

    /// Loads `configPath` (which must exist) or `/etc/reachd/reachd.conf` (defaults when absent),
    /// then its `reachd.conf.d/*.conf` drop-ins. Throws a `ConfigurationError` naming file, line and key.
    static func load(configPath: String?) throws -> DaemonSettings {
        let file = try ReachdConfiguration.load(mainFile: configPath ?? ReachdConfiguration.defaultPath,
                                                mustExist: configPath != nil)
        var settings = DaemonSettings()
        settings.file = file
        settings.monitor = ReachabilityMonitor.Configuration(file)
        settings.server.historySize = file.events.history
        settings.server.socketMode = UInt32(file.socket.mode)
        settings.server.maxConnections = file.limits.maxConnections
        settings.server.maxConnectionsPerUser = file.limits.maxConnectionsPerUser
        settings.server.partialMessageTimeout = file.limits.partialMessageTimeoutSeconds
        settings.server.maxQueuedBytes = file.limits.maxQueuedBytes
        settings.server.maxChecksInFlight = file.limits.maxChecksInFlight
        settings.server.maxChecksPerUser = file.limits.maxChecksPerUser
        settings.socketPath = file.socket.path
        settings.socketGroup = file.socket.group
        return settings
    }
}
