import ReachabilityCore

extension ReachabilityMonitor.Configuration {
    /// The monitor's part of reachd's configuration: `[Monitor]` and `[Interfaces]`.
    /// Fields the file does not cover (sysfs root, first sequence, namespace) keep their defaults.
    public init(_ config: ReachdConfiguration) {
        self.init()
        kindOverrides = config.interfaces.kinds.map { (glob: $0.glob, kind: $0.kind) }
        meteredInterfaces = config.interfaces.metered
        ignoredInterfaces = config.monitor.ignoreInterfaces
        debounceMilliseconds = config.monitor.debounceMilliseconds
    }
}
