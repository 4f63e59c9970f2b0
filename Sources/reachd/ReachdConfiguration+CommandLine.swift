import ReachabilityCore
import ReachabilityHost
import ReachabilityLinux

extension ReachdConfiguration {
    /// reachd's configuration for `--config`: `configPath` (which must exist) or
    /// `/etc/reachd/reachd.conf` (defaults when absent), then its `reachd.conf.d/*.conf`
    /// drop-ins. Throws a `ConfigurationError` naming file, line and key.
    static func load(configPath: String?) throws(ConfigurationError) -> ReachdConfiguration {
        try load(mainFile: configPath ?? defaultPath, mustExist: configPath != nil)
    }
}
