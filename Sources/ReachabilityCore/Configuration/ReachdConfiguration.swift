/// reachd's configuration: `/etc/reachd/reachd.conf` and its drop-ins (reachd.conf(5)).
///
/// `ReachdConfiguration()` is the built-in default, which is also what a missing file means.
/// Each section is one type, taken as it is by the component it configures; each key's default
/// is its initial value here and nowhere else (`Key=` resets to it);
/// `config/reachd.conf` documents every key with that default. Read files with
/// `ReachdConfiguration.load(mainFile:)` (ReachabilityHost) or, without I/O,
/// `ReachdConfiguration.parse(_:file:into:)`.
public struct ReachdConfiguration: Equatable, Sendable {
    /// The main file reachd reads when `--config` is not given.
    public static let defaultPath = "/etc/reachd/reachd.conf"

    /// `[Monitor]`: what the netlink monitor looks at.
    public struct MonitorSection: Equatable, Sendable {
        /// `IgnoreInterfaces=`: globs (fnmatch) of interface names reachd ignores altogether.
        public var ignoreInterfaces: [String] = []
        /// `Debounce=`: how long a change must settle before it is evaluated, in milliseconds.
        public var debounceMilliseconds: Int = 0
        /// `SleepLimit=`: seconds of `CLOCK_MONOTONIC` after logind's `PrepareForSleep(true)`
        /// with no `false` after which the sleep is taken as a wake.
        public var sleepLimitSeconds: Double = SleepCoordinator.defaultSleepLimit
        public init() {}
    }

    /// One `Kind.GLOB=KIND` line: interfaces whose name matches `glob` are of `kind`.
    public struct KindOverride: Equatable, Sendable {
        public var glob: String
        public var kind: InterfaceKind
        public init(glob: String, kind: InterfaceKind) { self.glob = glob; self.kind = kind }
    }

    /// `[Interfaces]`: how interfaces are classified.
    public struct InterfacesSection: Equatable, Sendable {
        /// `Kind.GLOB=`: forced kinds in file order; the first matching glob wins.
        public var kinds: [KindOverride] = []
        /// `Metered=`: globs of interfaces that are metered (`expensive`) although not cellular.
        /// Wins over `NotMetered=` and over every guess.
        public var metered: [String] = []
        /// `NotMetered=`: globs of interfaces that are not metered whatever their DHCP lease or
        /// NetworkManager guess (a cellular link stays `expensive`).
        public var notMetered: [String] = []
        /// `Constrained=`: globs of interfaces in "low data mode" (`Status.constrained`).
        public var constrained: [String] = []
        /// `LeaseDirectory=`: where systemd-networkd keeps its DHCPv4 leases, one file per
        /// interface index, read for the `ANDROID_METERED` guess.
        public var leaseDirectory: String = "/run/systemd/netif/leases"
        /// `NetworkManager=`: ask NetworkManager (system bus) which interfaces it calls metered.
        public var networkManager: Bool = true
        public init() {}

        /// Whether the interface `name` is metered: `Metered=` says yes, `NotMetered=` says no,
        /// and when neither names it, what the network `guessed` (the DHCP lease, NetworkManager).
        public func isMetered(_ name: String, guessed: Bool) -> Bool {
            if Glob.matchesAny(metered, name) { return true }
            if Glob.matchesAny(notMetered, name) { return false }
            return guessed
        }

        /// Whether the interface `name` is in low data mode (`Constrained=`).
        public func isConstrained(_ name: String) -> Bool {
            Glob.matchesAny(constrained, name)
        }
    }

    /// `[Connectivity]`: the HTTP check that tells `full` from `portal` and `limited`.
    public struct ConnectivitySection: Equatable, Sendable {
        /// `Enabled=`: when false, connectivity stays `unknown` and `Probe()` fails with `ProbeDisabled`.
        public var enabled: Bool = true
        /// `URL=`: an `http://` URL (the check is a plain HTTP/1.1 GET bound to the primary interface).
        public var url: String = "http://connectivity-check.ubuntu.com/"
        /// `Response=`: the expected body of a 200 answer. Empty: expect 204, or 200 with an empty body.
        public var response: String = ""
        /// `Interval=`: seconds between checks while reachable (a change of the primary path checks at once).
        public var intervalSeconds: Double = 300
        /// `Timeout=`: seconds a check may take before it counts as failed (`limited`).
        public var timeoutSeconds: Double = 5
        /// `CAFile=`: PEM certificates of private certificate authorities, trusted for https
        /// checks and captive-portal APIs besides the system's store; nil: the system's alone.
        public var caFile: String? = nil
        /// `CheckStandby=`: which uplinks besides the primary are checked too, each bound to its
        /// interface (`yes`, `no`, `unmetered`: all but metered and cellular ones).
        public var checkStandby: StandbyCheckMode = .unmetered
        /// `StandbyInterval=`: seconds between checks of a standby uplink; nil: 5 × `Interval=`.
        public var standbyIntervalSeconds: Double? = nil
        public init() {}
    }

    /// `[Cellular]`: the ModemManager source.
    public struct CellularSection: Equatable, Sendable {
        /// `ModemManager=`: ask ModemManager (system bus) about modems for the cellular generation.
        public var modemManager: Bool = true
        public init() {}
    }

    /// `[LinkQuality]`: measuring how good each uplink is (`Status.linkQuality`).
    public struct LinkQualitySection: Equatable, Sendable {
        /// `Enabled=`: measure at all (sock_diag dumps, check RTTs, the modem's signal).
        public var enabled = true
        /// `Interval=`: seconds between two sock_diag dumps of the apps' TCP sockets.
        public var intervalSeconds: Double = 10
        /// `StaleAfter=`: seconds without a measurement before an uplink's class is marked stale.
        public var staleAfterSeconds: Double = 300
        /// `UnknownAfter=`: seconds without a measurement before it is unknown.
        public var unknownAfterSeconds: Double = 900
        public init() {}
    }

    /// `[DataStall]`: telling from the apps' TCP traffic that an uplink carries nothing back.
    public struct DataStallSection: Equatable, Sendable {
        /// `Enabled=`: watch the apps' traffic for data stalls (the passive sock_diag dumps,
        /// every `[LinkQuality] Interval=`).
        public var enabled = true
        /// `MinimumSegments=`: segments sent since the last one received before a stall can be suspected.
        public var minimumSegments = 10
        /// `FailRate=`: the percentage of those that were retransmissions.
        public var failRatePercent: Double = 80
        /// `ExpensiveRecheckInterval=`: the least seconds between two checks of an expensive uplink.
        public var expensiveRecheckIntervalSeconds: Double = 60
        public init() {}
    }

    /// `[Socket]`: the varlink socket (unused when systemd passes the socket in).
    public struct SocketSection: Equatable, Sendable {
        /// `Path=`: nil means the default (`/run/reachd/io.reachd.Reachability`, or
        /// `$XDG_RUNTIME_DIR/reachd/…` when not root). `--socket` and `REACHD_SOCKET` win over it.
        public var path: String? = nil
        /// `Mode=`: permission bits of the socket file.
        public var mode: UInt32 = 0o666
        /// `Group=`: group owning the socket file; nil leaves the daemon's group.
        public var group: String? = nil
        public init() {}
    }

    /// `[Events]`: the event history for `Subscribe(after:)`.
    public struct EventsSection: Equatable, Sendable {
        /// `History=`: how many events are kept for resuming subscribers (0: none; at most 65536).
        public var history: Int = 256
        public init() {}
    }

    /// `[Simulation]`: who may play a network to the apps (`Simulate`).
    public struct SimulationSection: Equatable, Sendable {
        /// `Group=`: members of this group may simulate, besides root; nil: root only.
        public var group: String? = nil
        public init() {}
    }

    /// `[Limits]`: what one local user, or all of them, can make reachd spend. Every local user
    /// may connect (the socket is 0666), so each resource a caller can claim is bounded; over a
    /// bound the caller gets `Busy(retryAfterMs)` or that one connection is closed.
    public struct LimitsSection: Equatable, Sendable {
        /// `MaxConnections=`: open client connections over all users; more are closed at once.
        public var maxConnections: Int = 4096
        /// `MaxConnectionsPerUser=`: open connections of one uid (`SO_PEERCRED`).
        public var maxConnectionsPerUser: Int = 1024
        /// `PartialMessageTimeout=`: seconds a started message may stay incomplete before its
        /// connection is closed.
        public var partialMessageTimeoutSeconds: Double = 10
        /// `MaxQueuedBytes=`: replies waiting for slow readers, over all connections.
        public var maxQueuedBytes: Int = 64 << 20
        /// `MaxChecksInFlight=`: `Check` look-ups running at once over all users.
        public var maxChecksInFlight: Int = 16
        /// `MaxChecksPerUser=`: `Check` look-ups running at once for one uid.
        public var maxChecksPerUser: Int = 4
        /// `ProbeMinInterval=`: seconds between connectivity checks started by `Probe()` calls;
        /// a call within that time gets the last verdict.
        public var probeMinIntervalSeconds: Double = 1
        public init() {}

        /// The limits the varlink server applies (all but `ProbeMinInterval=`), for comparing.
        public var server: [Double] {
            [Double(maxConnections), Double(maxConnectionsPerUser), partialMessageTimeoutSeconds,
             Double(maxQueuedBytes), Double(maxChecksInFlight), Double(maxChecksPerUser)]
        }
    }

    /// `[Metrics]`: Prometheus metrics over HTTP and for node_exporter's textfile collector.
    public struct MetricsSection: Equatable, Sendable {
        /// `Listen=`: where `GET /metrics` is served; nil (the default) serves nothing.
        public var listen: MetricsListenAddress? = nil
        /// `TextfileDirectory=`: where `reachd.prom` is kept up to date; nil writes nothing.
        public var textfileDirectory: String? = nil
        /// `TextfileInterval=`: seconds between rewrites of `reachd.prom` without a change (the
        /// time-in-state counters move on).
        public var textfileIntervalSeconds: Double = 15
        public init() {}
    }

    public var monitor = MonitorSection()
    public var interfaces = InterfacesSection()
    public var connectivity = ConnectivitySection()
    public var cellular = CellularSection()
    public var linkQuality = LinkQualitySection()
    public var dataStall = DataStallSection()
    public var socket = SocketSection()
    public var events = EventsSection()
    public var simulation = SimulationSection()
    public var limits = LimitsSection()
    public var metrics = MetricsSection()

    /// The built-in defaults.
    public init() {}
}
