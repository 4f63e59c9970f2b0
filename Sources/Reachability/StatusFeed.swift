import Dispatch
import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityLinux

/// Where the feed's statuses come from at the moment.
enum FeedOrigin: Sendable, Equatable {
    case daemon
    case inProcess
    /// A `SimulatedNetwork` a test drives.
    case simulated
}

/// What every API object (Reachability, PathMonitor, NetworkDetector) needs to know to get statuses.
struct FeedSettings: Sendable {
    var source: ReachabilitySource
    var socketPath: String
    /// Used when the feed runs the monitor in-process.
    var monitorConfiguration: ReachabilityMonitor.Configuration
    /// What the in-process monitor runs besides netlink (ModemManager, the connectivity check).
    var services = InProcessServices()
    /// Where the in-process monitor and its services log: the app's sink, else nowhere (a
    /// library writes nothing to its app's stderr).
    var log = LogSink.discarding
    /// How often `.auto` looks for the daemon while running in-process.
    var daemonPollInterval: TimeInterval = 1
    /// Timeout of the one-shot `GetStatus` that tells whether the daemon answers.
    var callTimeout: TimeInterval = 3
}

/// One stream of `Status` values from reachd or from an in-process `ReachabilityMonitor`,
/// switching between them as `FeedSettings.source` says (see `ReachabilitySource`).
///
/// All state lives on one serial queue; the handler is called on it, in order, once per status
/// that `differs(from:)` the previous one (and once when the source changes). `stop()` is synchronous: once it returns the handler is
/// not running and will not be called again. Every background piece (the subscription thread, the
/// monitor observer, the poll timer) holds the feed weakly and carries the `epoch` it was started
/// in, so a piece left over from a previous source can never deliver.
final class StatusFeed: @unchecked Sendable, QueueConfined {
    typealias Handler = @Sendable (Status, FeedOrigin) -> Void

    let settings: FeedSettings
    private let queue = DispatchQueue(label: "reachd.reachability.feed")
    package let queueConfinement: QueueConfinement

    // Only touched on `queue`.
    private var handler: Handler?
    private var running = false
    private var epoch = 0
    private var origin: FeedOrigin?
    private var lastStatus: Status?
    private var subscription: ReachabilityClient.EventSubscription?
    private var monitor: ReachabilityMonitor?
    private var services: InProcessServiceSet?
    /// The monitor's sequence number of the status the feed started from.
    private var monitorSnapshot = Int.min
    private var pollTimer: DispatchSourceTimer?
    private var simulation: (network: SimulatedNetwork, observer: Int)?

    init(settings: FeedSettings) {
        self.settings = settings
        queueConfinement = QueueConfinement(queue)
    }

    deinit { stopOnQueueOrNow() }

    /// Starts the feed; the handler gets the current status before `start` returns or soon after.
    /// - Parameter requireDaemon: with `source: .daemon`, throw `daemonNotRunning` when no daemon
    ///   answers now (Reachability); when false, wait for one (PathMonitor, streams).
    func start(requireDaemon: Bool = true, handler: @escaping Handler) throws {
        try onQueue {
            guard !running else { return }
            self.handler = handler
            running = true
            epoch += 1
            do {
                switch settings.source {
                case .daemon:
                    do {
                        let status = try ReachabilityError.daemonStatus(socketPath: settings.socketPath, timeout: settings.callTimeout)
                        receive(status, origin: .daemon, epoch: epoch)
                    } catch let error as ReachabilityError {
                        if requireDaemon { throw error }
                    }
                    startSubscription(reconnect: true)
                case .inProcess:
                    try startMonitor()
                case .simulated(let network):
                    startSimulated(network)
                case .auto:
                    if let status = try? ReachabilityError.daemonStatus(socketPath: settings.socketPath, timeout: settings.callTimeout) {
                        receive(status, origin: .daemon, epoch: epoch)
                        startSubscription(reconnect: false)
                    } else {
                        try startMonitor()
                        startPolling()
                    }
                }
            } catch {
                stopOnQueue()
                throw error
            }
        }
    }

    /// Stops everything; synchronous (see the type's comment). Safe from the handler itself.
    func stop() {
        onQueue { stopOnQueue() }
    }

    private func stopOnQueueOrNow() {
        // In deinit nothing else can hold the feed, so the queue has no block of ours to wait for.
        subscription?.cancel()
        services?.stop()
        monitor?.stop()
        pollTimer?.cancel()
    }

    private func stopOnQueue() {
        running = false
        epoch += 1
        handler = nil
        origin = nil
        lastStatus = nil
        subscription?.cancel(); subscription = nil
        stopMonitor()
        pollTimer?.cancel(); pollTimer = nil
        if let simulation { simulation.network.removeObserver(simulation.observer) }
        simulation = nil
    }

    // MARK: - Delivery

    private func receive(_ status: Status, origin: FeedOrigin, epoch: Int) {
        guard running, epoch == self.epoch else { return }
        // A new source is always told (consumers track where facts come from); the same
        // status again from the same source is not.
        let sameSource = self.origin == origin
        self.origin = origin
        if sameSource, let lastStatus, !status.differs(from: lastStatus) {
            self.lastStatus = status
            return
        }
        lastStatus = status
        handler?(status, origin)
    }

    // MARK: - The daemon

    private func startSubscription(reconnect: Bool) {
        let started = epoch
        // `.daemon` rides out daemon restarts (and waits for a daemon that is not there yet);
        // `.auto` wants to hear at once that the daemon is gone, to fall back to the in-process
        // monitor. Events and the end are handed to the queue, where the epoch drops any that a
        // cancelled subscription was already delivering.
        let client = ReachabilityClient(socketPath: settings.socketPath)
        subscription = client.subscribe(
            waitForDaemon: reconnect, reconnect: reconnect,
            onEvent: { [weak self] event in
                guard let self else { return }
                self.queue.async { self.receive(event.current, origin: .daemon, epoch: started) }
            },
            onEnd: { [weak self] _ in
                guard let self else { return }
                self.queue.async { self.subscriptionEnded(epoch: started) }
            })
    }

    private func subscriptionEnded(epoch ended: Int) {
        guard running, ended == epoch else { return }
        subscription = nil
        switch settings.source {
        case .auto:
            epoch += 1
            do { try startMonitor() } catch { /* keep polling: the daemon may come back */ }
            startPolling()
        case .daemon:
            // A reconnecting subscription ends only when the daemon refuses `Subscribe` with an
            // error reply; `.daemon` has nowhere else to go, so ask again a little later.
            queue.asyncAfter(deadline: .now() + settings.daemonPollInterval) { [weak self] in
                guard let self, self.running, self.epoch == ended, self.subscription == nil else { return }
                self.startSubscription(reconnect: true)
            }
        case .inProcess, .simulated:
            break   // never subscribes
        }
    }

    /// `.auto` in-process: look for the daemon; when it answers, hand over to it.
    private func startPolling() {
        pollTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = settings.daemonPollInterval
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.pollDaemon() }
        pollTimer = timer
        timer.resume()
    }

    private func pollDaemon() {
        guard running, pollTimer != nil else { return }
        // A cheap look first: no socket file, no daemon.
        guard FileManager.default.fileExists(atPath: settings.socketPath),
              let status = try? ReachabilityError.daemonStatus(socketPath: settings.socketPath, timeout: settings.callTimeout)
        else { return }
        pollTimer?.cancel(); pollTimer = nil
        stopMonitor()
        epoch += 1
        receive(status, origin: .daemon, epoch: epoch)
        startSubscription(reconnect: false)
    }

    // MARK: - Simulated

    /// The test's network: its status now, then each one it sets, through the same delivery.
    private func startSimulated(_ network: SimulatedNetwork) {
        let started = epoch
        let observer = network.addObserver { [weak self] status in
            guard let self else { return }
            self.queue.async { self.receive(status, origin: .simulated, epoch: started) }
        }
        simulation = (network, observer)
        receive(network.status, origin: .simulated, epoch: started)
    }

    // MARK: - In-process

    private func startMonitor() throws {
        stopMonitor()
        var configuration = settings.monitorConfiguration
        // Statuses say whether this feed's own check runs, as reachd's say whether reachd's does.
        configuration.connectivityCheck = settings.services.connectivity.enabled
        let monitor = ReachabilityMonitor(configuration: configuration, log: settings.log)
        let started = epoch
        monitor.addObserver { [weak self] event in
            guard let self else { return }
            self.queue.async {
                // Events up to the snapshot below are in it already; delivered now they would be stale.
                guard event.sequence > self.monitorSnapshot else { return }
                self.receive(event.current, origin: .inProcess, epoch: started)
            }
        }
        do {
            try monitor.start()
        } catch {
            throw ReachabilityError.unableToStartMonitor("\(error)")
        }
        self.monitor = monitor
        // ModemManager's first answer is waited for (briefly), so the first status already
        // carries the cellular generation, as the daemon's does.
        services = InProcessServiceSet(monitor: monitor, services: settings.services, log: settings.log)
        let snapshot = monitor.initialEvent()
        monitorSnapshot = snapshot.sequence
        receive(snapshot.current, origin: .inProcess, epoch: started)
    }

    private func stopMonitor() {
        services?.stop()
        services = nil
        monitor?.stop()
        monitor = nil
    }

    // MARK: - One-shot

    /// The current status without starting a feed: the daemon's, or (`.auto` without a daemon,
    /// `.inProcess`) a monitor started and stopped for the occasion (with ModemManager, without
    /// the connectivity check: connectivity is `unknown`).
    static func currentStatus(settings: FeedSettings) throws -> (Status, FeedOrigin) {
        switch settings.source {
        case .simulated(let network):
            return (network.status, .simulated)
        case .daemon:
            return (try ReachabilityError.daemonStatus(socketPath: settings.socketPath, timeout: settings.callTimeout), .daemon)
        case .auto:
            if let status = try? ReachabilityError.daemonStatus(socketPath: settings.socketPath, timeout: settings.callTimeout) {
                return (status, .daemon)
            }
            fallthrough
        case .inProcess:
            let monitor = ReachabilityMonitor(configuration: settings.monitorConfiguration, log: settings.log)
            do { try monitor.start() } catch { throw ReachabilityError.unableToStartMonitor("\(error)") }
            defer { monitor.stop() }
            // The cellular generation, but no HTTP check: a one-shot answer does not wait for one.
            let services = InProcessServiceSet(monitor: monitor, services: settings.services, log: settings.log, connectivity: false)
            defer { services.stop() }
            return (monitor.status, .inProcess)
        }
    }
}
