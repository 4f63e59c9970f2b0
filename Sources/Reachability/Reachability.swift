import Dispatch
import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityLinux
import Synchronization

extension Notification.Name {
    /// Posted on `Reachability.notificationCenter` (default `NotificationCenter.default`) with the
    /// `Reachability` as the object, on its `callbackQueue`, once per change.
    public static let reachabilityChanged = Notification.Name("reachabilityChanged")
}

/// The `Reachability` of Apple's Reachability sample, HLNetWorkReachability and Reachability.swift,
/// backed by reachd.
///
/// ```swift
/// let reachability = try Reachability()
/// reachability.whenReachable = { r in print(r.connection) }      // "WiFi", "Cellular", "Ethernet"
/// reachability.whenUnreachable = { _ in print("not reachable") }
/// try reachability.startNotifier()                              // first callback: the current state
/// ```
///
/// A change is a change of `currentReachabilityStatus` or of the flags (`reachable`,
/// `connectionRequired`, `transientConnection`, `isWWAN`, …), as SCNetworkReachability reports
/// a change of its flags. Each change is delivered once, on `callbackQueue`: first `whenReachable`
/// or `whenUnreachable`, then the `.reachabilityChanged` notification. Nothing is delivered once
/// `stopNotifier()` has returned, and the instance is released when the app drops it (the
/// notifier then stops by itself).
///
/// A host target (`init(hostname:)`, `init(address:)`) is checked with reachd's
/// `Check(host:)` on every status change and every `hostRecheckInterval` seconds (a route to
/// one destination changes without the machine's status changing: a blackhole route, a VPN's
/// split routes). Without a daemon the same `HostChecker` runs in-process.
public final class Reachability: @unchecked Sendable, CustomStringConvertible {
    public typealias NetworkReachable = (Reachability) -> Void
    public typealias NetworkUnreachable = (Reachability) -> Void
    public typealias Source = ReachabilitySource

    /// How the target is reached, in Reachability.swift's terms (plus `.ethernet`).
    public enum Connection: Sendable, Equatable, CustomStringConvertible {
        case unavailable
        case wifi
        case cellular
        case ethernet

        public var description: String {
            switch self {
            case .unavailable: return "No Connection"
            case .wifi: return "WiFi"
            case .cellular: return "Cellular"
            case .ethernet: return "Ethernet"
            }
        }
    }

    /// The facts a change is judged by.
    struct State: Equatable, Sendable {
        var status: NetworkStatus
        var flags: [ReachabilityFlag]

        init(status: NetworkStatus, flags: [ReachabilityFlag]) {
            self.status = status
            // Order does not make a change.
            self.flags = flags.sorted { $0.rawValue < $1.rawValue }
        }

        static let unreachable = State(status: .notReachable, flags: [])
    }

    /// What the reachability is about.
    enum Target: Sendable, Equatable {
        case defaultRoute
        case host(String)
    }

    // MARK: - Configuration

    /// Where the facts come from (`.auto`, `.daemon`, `.inProcess`).
    public let source: Source
    /// The daemon's socket (`socketPath:` argument, `REACHD_SOCKET`, or the default paths).
    public let socketPath: String
    /// The host name or address given at init; nil for the default route.
    public let hostname: String?
    /// Configuration of the in-process monitor (used when no daemon answers, or `.inProcess`).
    /// Set before `startNotifier()`.
    public var inProcessConfiguration: ReachabilityMonitor.Configuration {
        get { shared.withLock { $0.inProcessConfiguration } }
        set { shared.withLock { $0.inProcessConfiguration = newValue } }
    }
    /// What the in-process monitor runs besides netlink: ModemManager for the cellular generation
    /// and the connectivity check (both on by default, with reachd's defaults). Set before
    /// `startNotifier()`.
    public var inProcessServices: InProcessServices {
        get { shared.withLock { $0.inProcessServices } }
        set { shared.withLock { $0.inProcessServices = newValue } }
    }
    /// Where the in-process monitor, its ModemManager source and its connectivity check log
    /// (what reachd would write to its journal: a failed check, ModemManager gone, a forged
    /// netlink message). nil (default): nowhere, so the library writes nothing to the app's
    /// stderr. A daemon answering logs nothing here. Set before `startNotifier()`.
    public var inProcessLog: LogSink? {
        get { shared.withLock { $0.inProcessLog } }
        set { shared.withLock { $0.inProcessLog = newValue } }
    }
    /// Host targets are checked again this often (seconds), besides on every status change.
    public var hostRecheckInterval: TimeInterval {
        get { shared.withLock { $0.hostRecheckInterval } }
        set { shared.withLock { $0.hostRecheckInterval = newValue } }
    }
    /// With false, a cellular path counts as `.unavailable` (Reachability.swift's option).
    public var allowsCellularConnection: Bool {
        get { shared.withLock { $0.allowsCellularConnection } }
        set { shared.withLock { $0.allowsCellularConnection = newValue } }
    }
    /// Where `.reachabilityChanged` is posted.
    public var notificationCenter: NotificationCenter {
        get { shared.withLock { $0.notificationCenter } }
        set { shared.withLock { $0.notificationCenter = newValue } }
    }
    /// The queue callbacks and notifications run on: a private serial queue unless set (`.main`
    /// for apps with a main loop). Set it before `startNotifier()`.
    public var callbackQueue: DispatchQueue {
        get { shared.withLock { $0.callbackQueue } }
        set { shared.withLock { $0.callbackQueue = newValue } }
    }
    /// Called on `callbackQueue` when the target becomes reachable (and first, when it is).
    public var whenReachable: NetworkReachable? {
        get { shared.withLock { $0.callbacks.whenReachable } }
        set { shared.withLock { $0.callbacks.whenReachable = newValue } }
    }
    /// Called on `callbackQueue` when the target becomes unreachable (and first, when it is).
    public var whenUnreachable: NetworkUnreachable? {
        get { shared.withLock { $0.callbacks.whenUnreachable } }
        set { shared.withLock { $0.callbacks.whenUnreachable = newValue } }
    }

    // MARK: - State

    let target: Target
    /// The settings above, the generation and the delivery bookkeeping.
    private struct Shared {
        var inProcessConfiguration = ReachabilityMonitor.Configuration()
        var inProcessServices = InProcessServices()
        var inProcessLog: LogSink?
        var hostRecheckInterval: TimeInterval = 2
        var allowsCellularConnection = true
        var notificationCenter = NotificationCenter.default
        var callbackQueue = DispatchQueue(label: "reachd.reachability.callbacks")
        var callbacks = Callbacks()
        /// Bumped by every start and stop: work carrying an older number is dropped.
        var generation = 0
        var feed: StatusFeed?
        var recheckTimer: RecheckTimer?
        /// The newest evaluated state and full status (what `currentReachabilityStatus` answers).
        var latest: (state: State, status: Status, check: HostCheck?, origin: FeedOrigin)?
        /// The deliveries running now, by thread: a callback reading `currentReachabilityStatus`
        /// sees the state it was called for, and `stopNotifier()` waits for the others.
        var deliveries: [(thread: pthread_t, state: State)] = []
        /// `stopNotifier()` calls waiting for a delivery to end; each is signalled once when one does.
        var deliveryWaiters: [DispatchSemaphore] = []
    }

    /// The app's closures: read under the lock, called on `callbackQueue`, as the iOS class
    /// calls them (they need not be `Sendable`).
    private struct Callbacks: @unchecked Sendable {
        var whenReachable: NetworkReachable?
        var whenUnreachable: NetworkUnreachable?
    }

    /// A Dispatch source may be cancelled from any thread.
    private struct RecheckTimer: @unchecked Sendable {
        let source: DispatchSourceTimer
    }

    private let shared = Mutex(Shared())

    /// Host checks and change detection, in order, off the feed's queue.
    private let evaluationQueue = DispatchQueue(label: "reachd.reachability.evaluate")
    // Only touched on `evaluationQueue`.
    private var lastDelivered: (generation: Int, state: State)?
    private var lastInput: (generation: Int, status: Status, origin: FeedOrigin)?

    // MARK: - Init

    /// Reachability of the default route (the machine's reachability).
    /// - Parameters:
    ///   - source: `.auto` (default), `.daemon` or `.inProcess`.
    ///   - socketPath: reachd's socket; nil: `REACHD_SOCKET`, then the default paths.
    public init(source: Source = .auto, socketPath: String? = nil) throws {
        self.source = source
        self.socketPath = resolvedSocketPath(socketPath)
        self.hostname = nil
        self.target = .defaultRoute
    }

    /// Reachability of one host (a name or an address literal), judged by reachd's `Check`.
    public init(hostname: String, source: Source = .auto, socketPath: String? = nil) throws {
        let trimmed = hostname.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw ReachabilityError.invalidHost(hostname) }
        self.source = source
        self.socketPath = resolvedSocketPath(socketPath)
        self.hostname = trimmed
        self.target = .host(trimmed)
    }

    /// Reachability of one address (`"192.0.2.1"`, `"2001:db8::1"`).
    public convenience init(address: String, source: Source = .auto, socketPath: String? = nil) throws {
        try self.init(hostname: address, source: source, socketPath: socketPath)
    }

    /// Reachability of one socket address (`sockaddr_in`, `sockaddr_in6`; the port is ignored).
    /// The zero address (0.0.0.0, ::) means the default route, as SCNetworkReachability's
    /// `reachabilityForInternetConnection` used it.
    public convenience init(address: UnsafePointer<sockaddr>, source: Source = .auto, socketPath: String? = nil) throws {
        switch try SocketAddressText.parse(address) {
        case .none: try self.init(source: source, socketPath: socketPath)
        case .some(let literal): try self.init(hostname: literal, source: source, socketPath: socketPath)
        }
    }

    deinit {
        stopNotifier()
    }

    // MARK: - Notifier

    /// True between `startNotifier()` and `stopNotifier()`.
    public var isNotifierRunning: Bool { shared.withLock { $0.feed != nil } }

    /// Starts watching; the first callback carries the current state.
    ///
    /// With `source: .daemon` this is where `ReachabilityError.daemonNotRunning(socketPath:)` is
    /// thrown when no daemon answers (init never connects). With `.inProcess`, and `.auto`
    /// without a daemon, it throws `unableToStartMonitor` when netlink cannot be opened.
    /// Calling it while running does nothing.
    public func startNotifier() throws {
        let source = self.source, socketPath = self.socketPath
        let starting = shared.withLock { shared -> (feed: StatusFeed, generation: Int, recheck: TimeInterval)? in
            guard shared.feed == nil else { return nil }
            shared.generation += 1
            let settings = FeedSettings(source: source, socketPath: socketPath,
                                        monitorConfiguration: shared.inProcessConfiguration, services: shared.inProcessServices,
                                        log: shared.inProcessLog ?? .discarding)
            let feed = StatusFeed(settings: settings)
            shared.feed = feed
            return (feed, shared.generation, shared.hostRecheckInterval)
        }
        guard let (feed, started, recheck) = starting else { return }

        do {
            try feed.start(requireDaemon: true) { [weak self] status, origin in
                guard let self else { return }
                self.evaluationQueue.async { [weak self] in self?.evaluate(status, origin: origin, generation: started) }
            }
        } catch {
            shared.withLock { shared in
                if shared.feed === feed { shared.feed = nil }
            }
            throw error
        }

        if case .host = target, recheck > 0 {
            let timer = DispatchSource.makeTimerSource(queue: evaluationQueue)
            timer.schedule(deadline: .now() + recheck, repeating: recheck, leeway: .milliseconds(200))
            timer.setEventHandler { [weak self] in self?.recheck(generation: started) }
            // A dispatch source must not be released suspended: resume it, then cancel it if a
            // stopNotifier() came in between.
            timer.resume()
            let recheckTimer = RecheckTimer(source: timer)
            let current = shared.withLock { shared in
                guard shared.generation == started else { return false }
                shared.recheckTimer = recheckTimer
                return true
            }
            if !current { timer.cancel() }
        }
    }

    /// Stops watching. When it returns, no callback or notification is running (except one on the
    /// calling thread itself, when called from a callback) and none will start.
    ///
    /// Do not call it from a thread that a running callback waits for synchronously (e.g. from
    /// the main thread while a callback does `DispatchQueue.main.sync`).
    public func stopNotifier() {
        let (feed, timer) = shared.withLock { shared in
            shared.generation += 1
            defer { shared.feed = nil; shared.recheckTimer = nil }
            return (shared.feed, shared.recheckTimer)
        }
        let me = pthread_self()
        while let deliveryEnded = shared.withLock({ shared -> DispatchSemaphore? in
            guard shared.deliveries.contains(where: { pthread_equal($0.thread, me) == 0 }) else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            shared.deliveryWaiters.append(semaphore)
            return semaphore
        }) {
            deliveryEnded.wait()
        }
        timer?.source.cancel()
        feed?.stop()
    }

    // MARK: - Reading the state

    /// The reachability status of the target: `.wifi`, `.ethernet`, `.wwan4G`, …, `.notReachable`.
    ///
    /// While the notifier runs this is the latest state (inside a callback: the state the callback
    /// is for). Otherwise it is fetched now, synchronously (from the daemon, or by a short-lived
    /// in-process monitor); `.notReachable` when that fails.
    public var currentReachabilityStatus: NetworkStatus { currentState.status }

    /// The 2G/3G/4G the path behaves like, measured rather than named by its radio (the web's
    /// `effectiveType`, on any kind of link): `.wwan2G` for `slow-2g` and `2g`, `.wwan3G`,
    /// `.wwan4G`; `.notReachable` when not reachable; nil while reachd has not measured it
    /// (and from the in-process fallback, which measures nothing). Read beside
    /// `currentReachabilityStatus`, the radio's: a 4G modem with one bar can be `.wwan2G` here.
    public var measuredReachabilityStatus: NetworkStatus? {
        guard currentState.status != .notReachable else { return .notReachable }
        return status?.linkQuality?.effectiveType.map(NetworkStatus.init(measured:))
    }

    /// The reachability flags of the target (SCNetworkReachability's names).
    public var flags: [ReachabilityFlag] { currentState.flags }

    /// How the target is reached: `.unavailable`, `.wifi`, `.cellular`, `.ethernet`.
    ///
    /// `NetworkStatus.unknown` (reachable through an interface of unknown kind: a tunnel, a
    /// virtual device) counts as `.ethernet`: not cellular, not known to be Wi-Fi.
    public var connection: Connection {
        let allowsCellular = allowsCellularConnection
        switch currentReachabilityStatus {
        case .notReachable: return .unavailable
        case .wifi: return .wifi
        case .ethernet, .unknown: return .ethernet
        case .wwan, .wwan2G, .wwan3G, .wwan4G, .wwan5G: return allowsCellular ? .cellular : .unavailable
        }
    }

    /// A link is there but has no address or route yet (the `connectionRequired` flag).
    public var isConnectionRequired: Bool { flags.contains(.connectionRequired) }

    /// True when the target is reachable (on cellular only if `allowsCellularConnection`).
    public var isReachable: Bool { connection != .unavailable }
    public var isReachableViaWWAN: Bool { connection == .cellular }
    public var isReachableViaWiFi: Bool { connection == .wifi }
    public var isReachableViaEthernet: Bool { connection == .ethernet }

    /// The machine's full status behind the latest state (nil before the first one).
    public var status: Status? { shared.withLock { $0.latest?.status } }
    /// For a host target: the latest `Check` answer (nil from the in-process fallback without
    /// a host checker, or before the first check).
    public var hostCheck: HostCheck? { shared.withLock { $0.latest?.check } }

    /// Where the latest state came from (tests watch `.auto` switch sources).
    var activeOrigin: FeedOrigin? { shared.withLock { $0.latest?.origin } }

    public var description: String {
        let state = currentState
        return ([state.status.rawValue] + state.flags.map(\.rawValue)).joined(separator: " ")
    }

    private enum KnownState {
        case known(State)
        case fetch(FeedSettings)
    }

    private var currentState: State {
        let me = pthread_self()
        let source = self.source, socketPath = self.socketPath
        // The state a callback on this thread is for, the latest while running, or how to fetch it.
        let known = shared.withLock { shared -> KnownState in
            if let delivery = shared.deliveries.last(where: { pthread_equal($0.thread, me) != 0 }) {
                return .known(delivery.state)
            }
            if shared.feed != nil, let latest = shared.latest { return .known(latest.state) }
            return .fetch(FeedSettings(source: source, socketPath: socketPath,
                                         monitorConfiguration: shared.inProcessConfiguration, services: shared.inProcessServices,
                                         log: shared.inProcessLog ?? .discarding))
        }
        let settings: FeedSettings
        switch known {
        case .known(let state): return state
        case .fetch(let fetch): settings = fetch
        }
        guard let (status, origin) = try? StatusFeed.currentStatus(settings: settings) else { return .unreachable }
        return evaluateTarget(status, origin: origin, monitorConfiguration: settings.monitorConfiguration).state
    }

    // MARK: - Evaluation (on evaluationQueue)

    private func evaluate(_ status: Status, origin: FeedOrigin, generation started: Int) {
        let (current, configuration) = shared.withLock { ($0.generation, $0.inProcessConfiguration) }
        guard current == started else { return }
        lastInput = (started, status, origin)
        let (state, check) = evaluateTarget(status, origin: origin, monitorConfiguration: configuration)
        let isNew: Bool = shared.withLock { shared in
            guard shared.generation == started else { return false }
            shared.latest = (state, status, check, origin)
            return true
        }
        guard isNew else { return }
        if let lastDelivered, lastDelivered.generation == started, lastDelivered.state == state { return }
        lastDelivered = (started, state)
        let queue = callbackQueue
        queue.async { [weak self] in self?.deliver(state, generation: started) }
    }

    private func recheck(generation started: Int) {
        guard let lastInput, lastInput.generation == started else { return }
        evaluate(lastInput.status, origin: lastInput.origin, generation: started)
    }

    /// The state of the target given the machine's status.
    private func evaluateTarget(_ status: Status, origin: FeedOrigin,
                                monitorConfiguration: ReachabilityMonitor.Configuration) -> (state: State, check: HostCheck?) {
        switch target {
        case .defaultRoute:
            return (State(status: status.status, flags: status.flags), nil)
        case .host(let host):
            // A test's network, or a simulation reachd plays, answers for every host as for the
            // default route: the routes to hosts are the real ones.
            if origin == .simulated || status.simulated { return (State(status: status.status, flags: status.flags), nil) }
            if origin == .daemon {
                do {
                    let check = try ReachabilityError.translating {
                        try ReachabilityClient(socketPath: socketPath, callTimeout: 15).checkBlocking(host: host)
                    }
                    return (Self.state(of: check), check)
                } catch ReachabilityClientError.remote(let error) where error.name == VarlinkError.hostNotFound(host).name {
                    return (.unreachable, nil)
                } catch {
                    // The daemon went away mid-check: answer in-process until the feed switches.
                }
            }
            return InProcessHostCheck.evaluate(host: host, status: status, configuration: monitorConfiguration)
        }
    }

    /// A `HostCheck` as a state: its status when reachable, `notReachable` otherwise.
    static func state(of check: HostCheck) -> State {
        guard check.reachable else {
            return State(status: .notReachable, flags: check.reachabilityFlags.filter { $0 != .reachable })
        }
        return State(status: NetworkStatus(rawValue: check.status) ?? .unknown, flags: check.reachabilityFlags)
    }

    // MARK: - Delivery (on callbackQueue)

    private func deliver(_ state: State, generation started: Int) {
        let me = pthread_self()
        let delivery = shared.withLock { shared -> (callbacks: Callbacks, center: NotificationCenter, counts: Bool)? in
            guard shared.generation == started else { return nil }
            shared.deliveries.append((me, state))
            let viaCellular = state.status.isWWAN
            let counts = state.status.isReachable && (!viaCellular || shared.allowsCellularConnection)
            return (shared.callbacks, shared.notificationCenter, counts)
        }
        guard let (callbacks, center, counts) = delivery else { return }
        let reachable = callbacks.whenReachable, unreachable = callbacks.whenUnreachable

        if counts { reachable?(self) } else { unreachable?(self) }
        center.post(name: .reachabilityChanged, object: self)

        let waiters = shared.withLock { shared in
            if let index = shared.deliveries.lastIndex(where: { pthread_equal($0.thread, me) != 0 }) {
                shared.deliveries.remove(at: index)
            }
            defer { shared.deliveryWaiters = [] }
            return shared.deliveryWaiters
        }
        for waiter in waiters { waiter.signal() }
    }
}
