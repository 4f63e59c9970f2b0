import FoundationEssentials

/// Everything one rendering of reachd's metrics needs, gathered at one moment
/// (`MetricsRecorder.sample`), rendered by `PrometheusExposition.render`.
public struct MetricsSample: Equatable, Sendable {
    /// `reachd_info{version}`.
    public var version: String
    /// The current status: the gauges.
    public var status: Status
    /// Seconds spent in each status since the daemon started, the current stretch included.
    public var statusSeconds: [NetworkStatus: Double]
    /// Seconds spent in each connectivity verdict since the daemon started.
    public var connectivitySeconds: [Connectivity: Double]
    /// Events sent, by reason.
    public var events: [Reason.Code: Int]
    /// When the last event happened (the start, before the first one).
    public var lastChange: Date
    /// Connectivity checks that ran, by verdict.
    public var probes: [Connectivity: Int]
    /// Requests to captive-portal APIs that ran, by what they said.
    public var apiProbes: [Connectivity: Int]
    /// Round trips of the connectivity checks that got an HTTP answer.
    public var probeDurations: MetricsHistogram
    /// Live subscriptions of the varlink server.
    public var subscribers: Int
    /// Connections the varlink server closed on the client, by reason (snake_case).
    public var connectionsRejected: [String: Int]
    /// Netlink socket overruns (each followed by a re-dump).
    public var netlinkOverruns: Int
    /// Whether the system bus (ModemManager, NetworkManager, logind) is connected; nil: no
    /// follower uses it.
    public var systemBusConnected: Bool?
    /// Data stalls suspected since the daemon started, by interface name.
    public var dataStalls: [String: Int]

    public init(version: String, status: Status, statusSeconds: [NetworkStatus: Double] = [:],
                connectivitySeconds: [Connectivity: Double] = [:], events: [Reason.Code: Int] = [:],
                lastChange: Date, probes: [Connectivity: Int] = [:], apiProbes: [Connectivity: Int] = [:], probeDurations: MetricsHistogram = MetricsHistogram(),
                subscribers: Int = 0, connectionsRejected: [String: Int] = [:], netlinkOverruns: Int = 0,
                dataStalls: [String: Int] = [:]) {
        self.version = version; self.status = status; self.statusSeconds = statusSeconds
        self.connectivitySeconds = connectivitySeconds; self.events = events; self.lastChange = lastChange
        self.probes = probes; self.apiProbes = apiProbes; self.probeDurations = probeDurations; self.subscribers = subscribers
        self.connectionsRejected = connectionsRejected; self.netlinkOverruns = netlinkOverruns
        self.dataStalls = dataStalls
    }
}
