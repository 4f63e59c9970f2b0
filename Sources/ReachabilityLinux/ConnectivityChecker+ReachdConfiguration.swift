import ReachabilityCore

extension ConnectivityChecker.Configuration {
    /// The checker's part of reachd's configuration: `[Connectivity]` and `[Limits] ProbeMinInterval=`.
    /// Fields the file does not cover (backoff, namespace, hosts file) keep their defaults.
    public init(_ config: ReachdConfiguration) {
        self.init()
        enabled = config.connectivity.enabled
        url = config.connectivity.url
        expectedResponse = config.connectivity.response
        interval = config.connectivity.intervalSeconds
        timeout = config.connectivity.timeoutSeconds
        probeMinInterval = config.limits.probeMinIntervalSeconds
    }
}
