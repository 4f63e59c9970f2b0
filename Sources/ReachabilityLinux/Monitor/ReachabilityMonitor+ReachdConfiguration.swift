import ReachabilityCore

extension ReachabilityMonitor.Configuration {
    /// The monitor's part of reachd's configuration: `[Monitor]`, `[Interfaces]` and whether
    /// `[Connectivity]` checks.
    /// Fields the file does not cover (sysfs root, first sequence, namespace) keep their defaults.
    public init(_ config: ReachdConfiguration) {
        self.init()
        monitor = config.monitor
        interfaces = config.interfaces
        connectivityCheck = config.connectivity.enabled
        linkQuality = config.linkQuality
        dataStall = config.dataStall
    }
}
