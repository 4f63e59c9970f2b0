import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilityLinux
import ReachabilityServer
import ReachabilitySystem

/// The running daemon: the monitor feeding the varlink server, and the signal handling.
final class Daemon: @unchecked Sendable {
    let log: LogSink
    /// reachd.conf as loaded at start or by the last good SIGHUP.
    var configuration: ReachdConfiguration
    let options: DaemonOptions
    let notifier = SystemdNotifier()
    /// Where every component reads the time: the monitor, the simulation, the server, the metrics.
    let clock: ReachdClock
    private(set) var monitor: ReachabilityMonitor?
    private(set) var server: ReachabilityServer?
    private var signalSources: [DispatchSourceSignal] = []
    /// Run after a successful SIGHUP reload with the new file (connectivity check, cellular).
    var reloadHooks: [(ReachdConfiguration) -> Void] = []
    /// The one system-bus connection ModemManager, NetworkManager and logind are followed over
    /// (on the monitor's queue), retried while it is gone.
    var systemBus: SystemBus?
    /// ModemManager, unless `[Cellular] ModemManager=no`.
    var modemSource: ModemManagerSource?
    /// NetworkManager's metered guess, unless `[Interfaces] NetworkManager=no`.
    var networkManagerSource: NetworkManagerMeteredSource?
    /// iwd, NetworkManager's and wpa_supplicant's Wi-Fi devices.
    var wifiSource: WiFiOwnerSource?
    /// The sock_diag sampler of the apps' TCP sockets (`[LinkQuality]`).
    var qualitySampler: PassiveQualitySampler?
    /// logind's sleep and wake, with a delay inhibitor while awake.
    var sleepMonitor: LogindSleepMonitor?
    /// The simulation overlay: what subscribers see.
    private(set) var simulation: SimulationController?
    /// Prometheus metrics, unless `[Metrics]` asks for none.
    private(set) var metrics: MetricsCollector?

    init(options: DaemonOptions, configuration: ReachdConfiguration, log: LogSink, clock: ReachdClock = .system) {
        self.options = options; self.configuration = configuration; self.log = log; self.clock = clock
    }

    /// Starts everything; returns when the daemon is serving. Errors are fatal (exit 1).
    func start() throws {
        ProcessSetup.ignoreSIGPIPE()
        let limit = ProcessSetup.raiseFileDescriptorLimit()
        log.debug("file descriptor limit \(limit)")
        let environment = ProcessInfo.processInfo.environment

        // Sequence numbers start at the start time in ms or above the last run's, whichever is
        // larger, so they keep rising across restarts even when the clock stepped back.
        var monitorConfiguration = ReachabilityMonitor.Configuration(configuration)
        let stateDirectory = EventNumberFile.directory(environment: environment, effectiveUserID: ProcessSetup.effectiveUserID)
        let (firstSequence, eventNumbers) = EventNumberFile.open(directory: stateDirectory, clock: clock.now().wall, log: log)
        monitorConfiguration.firstSequence = firstSequence
        let monitor = ReachabilityMonitor(configuration: monitorConfiguration, log: log, clock: clock)
        try monitor.start()
        self.monitor = monitor
        let systemBus = SystemBus(queue: monitor.queue, log: log) { [weak self] connected in
            self?.metrics?.recordSystemBus(connected: connected)
        }
        self.systemBus = systemBus
        systemBus.start()
        startCellular(monitor: monitor)
        startNetworkManager(monitor: monitor)
        startWiFi(monitor: monitor)
        startLinkQuality(monitor: monitor)

        // The server shares the monitor's queue: an event is encoded and sent by the thread that
        // classified it, with no wake-up of another thread in between (sockets stay non-blocking,
        // so no subscriber can hold the monitor up).
        let simulation = startSimulation(monitor: monitor)
        self.simulation = simulation
        let initial = monitor.queue.sync { simulation.initialEvent() }
        var serverConfiguration = ReachabilityServer.Configuration()
        serverConfiguration.events = configuration.events
        serverConfiguration.limits = configuration.limits
        serverConfiguration.socket = configuration.socket
        let server = ReachabilityServer(initial: initial, configuration: serverConfiguration,
                                        queue: monitor.queue, clock: clock)
        server.logSink = log
        let log = self.log
        let metrics = makeMetrics(initial: initial, monitor: monitor, server: server)
        self.metrics = metrics
        // The bus's changes before this went nowhere; those after it follow on the same queue.
        monitor.queue.async { metrics?.recordSystemBus(connected: systemBus.isConnected) }
        monitor.queue.sync {
            simulation.publish = { [weak self] event in
                // The number on file first (a write only every few hundred events), then the
                // subscribers; systemd's STATUS= and the log line can wait the few µs.
                eventNumbers?.publishing(event.sequence)
                server.publish(event)
                metrics?.record(event)
                self?.notifyStatus(event.current)
                // What the network's routers announce comes at their rate (anyone on the link can
                // send advertisements): at debug, so that it cannot fill the journal. The line is
                // made only when it is written.
                let level: LogLevel = event.reason.code == .routerAdvertisement ? .debug : .info
                if log.threshold <= level { log.log(level, event.logLine) }
            }
            // An event between initialEvent() and setting `publish` was not published: re-read
            // the state (the server ignores it unless the sequence number moved on).
            let current = simulation.initialEvent()
            eventNumbers?.publishing(current.sequence)
            server.publish(current)
            metrics?.catchUp(current)
        }
        // New figures of the same class are no event, but GetStatus shows them.
        monitor.addQuietObserver { [weak simulation] status in
            guard let simulation, simulation.showsReal else { return }
            server.refresh(status)
            metrics?.refresh(status)
        }
        server.simulateHandler = { [weak simulation] parameters, caller, completion in
            guard let simulation else { return completion(.error(.permissionDenied)) }
            simulation.simulate(parameters, caller: caller, completion: completion)
        }
        server.hangUpHandler = { [weak simulation] connection in simulation?.hungUp(connection: connection) }
        reloadHooks.append { file in
            monitor.queue.async { simulation.groupName = file.simulation.group }
        }
        // Threads for Check look-ups: as many as may be in flight, made as they are needed (a
        // thread that cannot be made means Busy, never a caller left waiting), with room for as
        // many jobs whose caller gave up while getaddrinfo still runs.
        let limits = configuration.limits
        let lookups = WorkerPool(name: "reachd-check", threads: limits.maxChecksInFlight, maxQueued: limits.maxChecksInFlight,
                                 eager: false)
        server.checkHandler = Self.checkHandler(monitor: monitor, checker: HostChecker(pool: lookups))
        self.server = server
        let checker = startConnectivityCheck(monitor: monitor, server: server)
        startSleepFollowing(monitor: monitor, checker: checker)
        if let metrics { try startMetrics(metrics) }

        if let fd = activatedSocket() {
            try server.listen(fileDescriptor: fd)
            log.info("listening on the socket passed by systemd")
        } else {
            let path = try SocketLocation.resolve(explicit: options.socketPath, configured: configuration.socket.path,
                                                  environment: environment, log: log)
            try SocketLocation.claim(path)
            try server.listen(at: path)
            try applySocketGroup(path: path)
            log.info("listening on \(path)")
        }
        let status = monitor.queue.sync { simulation.published }
        log.info("status: \(status.status.rawValue)\(status.primary.map { " (\($0.name))" } ?? "")")
        installSignalHandlers()
        notifyReady(status)
    }

    /// Stops serving, removes the socket, exits 0.
    func stop(signal name: String) {
        log.info("\(name): stopping")
        _ = notifier.stopping()
        server?.stop()
        metrics?.stop()
        modemSource?.stop()
        networkManagerSource?.stop()
        wifiSource?.stop()
        sleepMonitor?.stop()
        systemBus?.stop()
        monitor?.stop()
        ProcessSetup.exit(0)
    }

    private func installSignalHandlers() {
        for signal in [Signal.terminate, .interrupt] {
            signal.ignore()
            let source = DispatchSource.makeSignalSource(signal: signal.number, queue: .main)
            source.setEventHandler { [weak self] in self?.stop(signal: signal.name) }
            source.resume()
            signalSources.append(source)
        }
        Signal.hangup.ignore()
        let hangup = DispatchSource.makeSignalSource(signal: Signal.hangup.number, queue: .main)
        hangup.setEventHandler { [weak self] in self?.reload() }
        hangup.resume()
        signalSources.append(hangup)
    }
}
