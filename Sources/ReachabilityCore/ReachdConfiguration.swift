/// reachd's configuration: `/etc/reachd/reachd.conf` and its drop-ins (DESIGN.md §5).
///
/// `ReachdConfiguration()` is the built-in default, which is also what a missing file means;
/// `config/reachd.conf` documents every key with that default. Read files with
/// `ReachdConfiguration.load(mainFile:)` (ReachabilityLinux) or, without I/O,
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
        public var metered: [String] = []
        public init() {}
    }

    /// `[Connectivity]`: the HTTP check that tells `full` from `portal` and `limited`.
    public struct ConnectivitySection: Equatable, Sendable {
        /// The URL the check uses when none is configured.
        public static let defaultURL = "http://connectivity-check.ubuntu.com/"
        /// `Enabled=`: when false, connectivity stays `unknown` and `Probe()` fails with `ProbeDisabled`.
        public var enabled: Bool = true
        /// `URL=`: an `http://` URL (the check is a plain HTTP/1.1 GET bound to the primary interface).
        public var url: String = ConnectivitySection.defaultURL
        /// `Response=`: the expected body of a 200 answer. Empty: expect 204, or 200 with an empty body.
        public var response: String = ""
        /// `Interval=`: seconds between checks while reachable (a change of the primary path checks at once).
        public var intervalSeconds: Double = 300
        /// `Timeout=`: seconds a check may take before it counts as failed (`limited`).
        public var timeoutSeconds: Double = 5
        public init() {}
    }

    /// `[Cellular]`: the ModemManager source.
    public struct CellularSection: Equatable, Sendable {
        /// `ModemManager=`: ask ModemManager (system bus) about modems for the cellular generation.
        public var modemManager: Bool = true
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
        /// `History=`: how many events are kept for resuming subscribers (0: none).
        public var history: Int = 256
        public init() {}
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
    public var socket = SocketSection()
    public var events = EventsSection()
    public var metrics = MetricsSection()

    /// The built-in defaults.
    public init() {}
}
