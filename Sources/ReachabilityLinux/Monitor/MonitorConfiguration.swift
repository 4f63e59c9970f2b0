import ReachabilityCore

extension ReachabilityMonitor {
    /// What the monitor watches and how it names things.
    public struct Configuration: Sendable {
        /// Where sysfs is mounted; tests point it at a fake tree.
        public var sysfsRoot: String = "/sys"
        /// `[Monitor]`: ignored interfaces and the hold-down before a change is evaluated.
        public var monitor = ReachdConfiguration.MonitorSection()
        /// `[Interfaces]`: forced kinds and metered interfaces.
        public var interfaces = ReachdConfiguration.InterfacesSection()
        /// The sequence number of the initial state (see `StatusTracker`).
        public var firstSequence: Int = 0
        /// The network namespace (a name under /run/netns or an absolute path) whose sockets the
        /// monitor opens; nil for the caller's own. Tests run the monitor against their namespaces.
        public var networkNamespace: String? = nil
        /// The netlink socket's receive buffer in bytes. Big, so that bursts do not overrun it;
        /// tests make it small to provoke overruns.
        public var receiveBufferSize: Int = 8 << 20
        /// `[Connectivity] Enabled=`: whether statuses say the internet is checked
        /// (`Status.connectivityCheck`); the checker itself is reachd's.
        public var connectivityCheck = true
        /// `[LinkQuality]`: whether uplinks' quality is measured, and its idle times.
        public var linkQuality = ReachdConfiguration.LinkQualitySection()
        /// `[DataStall]`: whether the apps' traffic is watched for data stalls.
        public var dataStall = ReachdConfiguration.DataStallSection()

        public init() {}
    }
}

extension ReachabilityMonitor.Configuration {
    /// The monitor's part of reachd's configuration: `[Monitor]`, `[Interfaces]`, whether
    /// `[Connectivity]` checks, `[LinkQuality]` and `[DataStall]`. Fields the file does not
    /// cover (sysfs root, first sequence, namespace) keep their defaults.
    public init(_ config: ReachdConfiguration) {
        self.init()
        monitor = config.monitor
        interfaces = config.interfaces
        connectivityCheck = config.connectivity.enabled
        linkQuality = config.linkQuality
        dataStall = config.dataStall
    }

    /// What the core decides with, of this configuration.
    var core: MonitorCore.Configuration {
        MonitorCore.Configuration(monitor: monitor, interfaces: interfaces, connectivityCheck: connectivityCheck,
                                  linkQuality: linkQuality, dataStall: .init(dataStall), firstSequence: firstSequence)
    }
}
