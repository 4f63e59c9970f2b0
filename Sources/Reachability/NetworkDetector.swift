import Dispatch
import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityLinux
import Synchronization

/// The iOS `NetworkDetector` class on reachd: does the internet — or the app's own backend — really answer?
///
/// Two questions, two answers:
/// - **Is there internet here?** `check()` (and `connectivityChanges`): reachd's portal-aware
///   verdict (`Probe()`), NetworkManager's rules against reachd's check URL: `connectivity` is
///   `.full`, `.portal`, `.limited`, `.none`. Use it to tell the user "you are behind a captive
///   portal" or "offline".
/// - **Does my server answer?** `check(url:timeout:accepting:)`: the iOS class's contract. One GET
///   of the app's URL, no cache, redirects not followed, the status decides (by default
///   200–399 means reachable), 10 s timeout, status 0 without an answer. Use it before talking
///   to your backend; it knows nothing about portals (a portal's redirect is a 3xx too).
///
/// The iOS class's calls (`checkNetworkReachability(completion:)`, `networkReachabilityPublisher`)
/// check `backendURL` its way when it is set, and otherwise give reachd's verdict.
///
/// ```swift
/// let detector = NetworkDetector.shared
/// let verdict = await detector.check()                       // .full, .portal, …
/// let backend = await detector.check(url: URL(string: "https://api.example.com/health")!)
/// detector.backendURL = URL(string: "https://api.example.com/health")
/// detector.checkNetworkReachability { isReachable, statusCode, error in … }   // main queue
/// ```
public final class NetworkDetector: @unchecked Sendable {
    /// The detector on the default socket (`REACHD_SOCKET`, then the default paths).
    public static let shared = NetworkDetector()

    /// reachd's verdict: the answer of `check()`.
    public struct Result: Sendable, Equatable, CustomStringConvertible {
        /// True when the expected answer came back (`connectivity == .full`).
        public let isReachable: Bool
        /// The HTTP status of the check's answer (204, 302, …); 0 without one, as on iOS.
        public let statusCode: Int
        /// Why it is not reachable; nil when it is.
        public let error: NetworkDetectorError?
        public let connectivity: Connectivity
        /// The daemon's full probe result (URL, RTT, portal URL, time).
        public let probe: Probe?

        public init(isReachable: Bool, statusCode: Int, error: NetworkDetectorError?, connectivity: Connectivity, probe: Probe?) {
            self.isReachable = isReachable; self.statusCode = statusCode; self.error = error
            self.connectivity = connectivity; self.probe = probe
        }

        /// The result of a probe, as the iOS class's callers expect it.
        public init(_ probe: Probe) {
            let error: NetworkDetectorError?
            switch probe.result {
            case .full: error = nil
            case .portal: error = .captivePortal(portalURL: probe.portalUrl)
            case .none: error = .notReachable
            case .limited, .unknown: error = .probeFailed(probe.error ?? "no answer from \(probe.url)")
            }
            self.init(isReachable: probe.result == .full, statusCode: probe.httpStatus ?? 0, error: error,
                      connectivity: probe.result, probe: probe)
        }

        /// True when the network's own captive-portal API (RFC 8908, announced by a router
        /// advertisement) answered this check; its facts are then in `probe` (`portalUrl`,
        /// `venueInfoUrl`, `secondsRemaining`, `bytesRemaining`, `canExtendSession`).
        public var isFromCaptivePortalAPI: Bool { probe?.source == CaptivePortalAPI.source }

        /// Seconds left of the session as the captive-portal API said at the check; nil when it said nothing.
        public var secondsRemaining: Int? { probe?.secondsRemaining }

        public var description: String {
            var text = "\(connectivity.rawValue)"
            if statusCode != 0 { text += " (HTTP \(statusCode))" }
            if let error { text += ": \(error)" }
            return text
        }
    }

    /// The answer of `check(url:timeout:accepting:)`.
    public struct URLResult: Sendable, Equatable, CustomStringConvertible {
        /// True when the status is in the accepted range.
        public let isReachable: Bool
        /// The HTTP status of the answer (a redirect's own 3xx); 0 without an answer.
        public let statusCode: Int
        /// nil when reachable; `.httpStatus`, `.timedOut`, `.requestFailed` or `.invalidURL`.
        public let error: NetworkDetectorError?
        public let url: URL

        public init(isReachable: Bool, statusCode: Int, error: NetworkDetectorError?, url: URL) {
            self.isReachable = isReachable; self.statusCode = statusCode; self.error = error; self.url = url
        }

        public var description: String {
            (isReachable ? "reachable" : "not reachable") + (statusCode != 0 ? " (HTTP \(statusCode))" : "")
                + (error.map { ": \($0)" } ?? "")
        }
    }

    /// The iOS class's defaults for `check(url:)`.
    public static let defaultTimeout: TimeInterval = 10
    public static let defaultAcceptedStatusCodes: Range<Int> = 200..<400

    public let source: ReachabilitySource
    public let socketPath: String

    /// The app's own URL for the iOS class's calls (`checkNetworkReachability(completion:)`,
    /// `networkReachabilityPublisher`); nil: they give reachd's verdict.
    public var backendURL: URL? {
        get { settings.withLock { $0.backendURL } }
        set { settings.withLock { $0.backendURL = newValue } }
    }
    /// Timeout of the iOS class's calls when `backendURL` is set (default 10 s).
    public var timeout: TimeInterval {
        get { settings.withLock { $0.timeout } }
        set { settings.withLock { $0.timeout = newValue } }
    }
    /// Statuses that mean reachable for the iOS class's calls when `backendURL` is set (default 200..<400).
    public var acceptedStatusCodes: Range<Int> {
        get { settings.withLock { $0.acceptedStatusCodes } }
        set { settings.withLock { $0.acceptedStatusCodes = newValue } }
    }
    /// Configuration of the in-process monitor used when no daemon answers.
    public var inProcessConfiguration: ReachabilityMonitor.Configuration {
        get { settings.withLock { $0.inProcessConfiguration } }
        set { settings.withLock { $0.inProcessConfiguration = newValue } }
    }
    /// What runs in-process without a daemon: `connectivity` is the check `check()` runs itself
    /// (URL, expected response, timeout: reachd's defaults) and that feeds `connectivityChanges`;
    /// ModemManager for the cellular facts.
    public var inProcessServices: InProcessServices {
        get { settings.withLock { $0.inProcessServices } }
        set { settings.withLock { $0.inProcessServices = newValue } }
    }
    /// Where the in-process monitor, its ModemManager source and its connectivity check log
    /// (what reachd would write to its journal: a failed check, ModemManager gone, a forged
    /// netlink message). nil (default): nowhere, so the library writes nothing to the app's
    /// stderr. A daemon answering logs nothing here. Set before the first call.
    public var inProcessLog: LogSink? {
        get { settings.withLock { $0.inProcessLog } }
        set { settings.withLock { $0.inProcessLog = newValue } }
    }
    /// Where completions and publisher values run. nil (default): the main queue when the app
    /// runs a main loop (`dispatchMain()`, `RunLoop.main.run()`, an `async` main), as on iOS;
    /// otherwise a private serial queue. The library tells by a block it puts on the main queue
    /// when the first detector is made: once that has run, the main loop runs; an answer that
    /// comes before waits up to 0.25 s for it, then takes the private queue (a program whose
    /// main thread waits on a semaphore is answered, not deadlocked). Set `.main` to insist.
    public var completionQueue: DispatchQueue? {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    private struct Settings {
        var backendURL: URL?
        var timeout = NetworkDetector.defaultTimeout
        var acceptedStatusCodes = NetworkDetector.defaultAcceptedStatusCodes
        var inProcessConfiguration = ReachabilityMonitor.Configuration()
        var inProcessServices = InProcessServices()
        var inProcessLog: LogSink?
        var completionQueue: DispatchQueue?
    }
    private let settings = Mutex(Settings())
    private let privateQueue = DispatchQueue(label: "reachd.networkdetector.completion")

    /// - Parameters:
    ///   - source: `.auto` asks reachd, else checks in-process; `.daemon` only reachd
    ///     (`daemonNotRunning` without one); `.inProcess` always checks itself.
    ///   - socketPath: reachd's socket; nil: `REACHD_SOCKET`, then the default paths.
    public init(source: ReachabilitySource = .auto, socketPath: String? = nil) {
        self.source = source
        self.socketPath = resolvedSocketPath(socketPath)
        MainLoop.watch
    }

    /// Runs a completion on `completionQueue`, or as `MainLoop` decides.
    func deliver(on queue: DispatchQueue?, _ work: @escaping @Sendable () -> Void) {
        if let queue = queue ?? completionQueue {
            queue.async(execute: work)
        } else {
            MainLoop.run(work, fallback: privateQueue)
        }
    }

    // MARK: - reachd's verdict

    /// Runs the connectivity check now and tells whether the internet answers (reachd's
    /// portal-aware verdict; without a daemon, the same check in-process).
    public func check() async -> Result {
        let context = checkContext
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.checkNow(context))
            }
        }
    }

    // MARK: - The app's URL (the iOS class's contract)

    /// One GET of `url`: reachable when the status is in `accepting` (default 200..<400; a
    /// redirect is not followed, its 3xx is the answer), within `timeout` seconds (default 10).
    /// No cache: every call is a new request. `statusCode` is 0 without an answer.
    public func check(url: URL, timeout: TimeInterval = NetworkDetector.defaultTimeout,
                      accepting: Range<Int> = NetworkDetector.defaultAcceptedStatusCodes) async -> URLResult {
        await withCheckedContinuation { continuation in
            // A OneShotCheck answers once: one resume.
            _ = Self.startURLCheck(url: url, timeout: timeout, accepting: accepting) { answer in
                continuation.resume(returning: URLResult(isReachable: answer.isReachable, statusCode: answer.statusCode,
                                                         error: answer.error, url: url))
            }
        }
    }

    /// The iOS class's callback: `backendURL` checked its way when set (else reachd's
    /// verdict); `(isReachable, statusCode, error)` once, on `completionQueue` (see there).
    public func checkNetworkReachability(completion: @escaping @Sendable (Bool, Int, Error?) -> Void) {
        _ = startSeedCheck(queue: nil) { answer in completion(answer.isReachable, answer.statusCode, answer.error) }
    }

    /// `check(url:timeout:accepting:)` with the iOS class's callback, once, on `completionQueue`.
    public func checkNetworkReachability(url: URL, timeout: TimeInterval = NetworkDetector.defaultTimeout,
                                         accepting: Range<Int> = NetworkDetector.defaultAcceptedStatusCodes,
                                         completion: @escaping @Sendable (Bool, Int, Error?) -> Void) {
        _ = startSeedCheck(url: url, timeout: timeout, accepting: accepting, queue: nil) { answer in
            completion(answer.isReachable, answer.statusCode, answer.error)
        }
    }

    /// The iOS class's publisher: one check (`backendURL` its way when set, else reachd's
    /// verdict) per `sink`; `true` then `.finished`, or `.failure(error)` whose `statusCode` is
    /// the HTTP status (0 without an answer).
    public var networkReachabilityPublisher: NetworkReachabilityPublisher {
        NetworkReachabilityPublisher(detector: self, url: nil, timeout: nil, accepting: nil, queue: nil)
    }

    /// The publisher for `url`, with the iOS class's defaults.
    public func networkReachabilityPublisher(url: URL, timeout: TimeInterval = NetworkDetector.defaultTimeout,
                                             accepting: Range<Int> = NetworkDetector.defaultAcceptedStatusCodes)
        -> NetworkReachabilityPublisher {
        NetworkReachabilityPublisher(detector: self, url: url, timeout: timeout, accepting: accepting, queue: nil)
    }

    /// Starts one check the iOS class's way: `url` (or `backendURL`, or reachd's verdict); `deliver`
    /// runs once on `queue` (nil: `deliveryQueue` at the time of the answer), unless cancelled.
    func startSeedCheck(url: URL? = nil, timeout: TimeInterval? = nil, accepting: Range<Int>? = nil,
                        queue: DispatchQueue?, deliver: @escaping @Sendable (SeedAnswer) -> Void) -> OneShotCheck {
        let (backend, defaultTimeout, defaultAccepting) = settings.withLock { ($0.backendURL, $0.timeout, $0.acceptedStatusCodes) }
        // Holds the detector until the answer is in, as URLSession holds its session.
        let onQueue: @Sendable (SeedAnswer) -> Void = { answer in
            self.deliver(on: queue) { deliver(answer) }
        }
        if let target = url ?? backend {
            return Self.startURLCheck(url: target, timeout: timeout ?? defaultTimeout,
                                      accepting: accepting ?? defaultAccepting, deliver: onQueue)
        }
        let context = checkContext
        let check = OneShotCheck(deliver: onQueue)
        check.workBegan()
        DispatchQueue.global().async {
            let result = Self.checkNow(context)
            check.finish(SeedAnswer(isReachable: result.isReachable, statusCode: result.statusCode, error: result.error))
            check.workEnded()
        }
        return check
    }

    static func startURLCheck(url: URL, timeout: TimeInterval, accepting: Range<Int>,
                              deliver: @escaping @Sendable (SeedAnswer) -> Void) -> OneShotCheck {
        let check = OneShotCheck(deliver: deliver)
        URLCheck(url: url, timeout: timeout, accepting: accepting, check: check).start()
        return check
    }

    // MARK: - reachd's verdict, blocking

    /// What one check needs, read once under the lock.
    struct CheckContext: Sendable {
        var socketPath: String
        var source: ReachabilitySource
        var services: InProcessServices
        var monitorConfiguration: ReachabilityMonitor.Configuration
        var log: LogSink
    }

    private var checkContext: CheckContext {
        let socketPath = self.socketPath, source = self.source
        return settings.withLock { settings in
            CheckContext(socketPath: socketPath, source: source, services: settings.inProcessServices,
                         monitorConfiguration: settings.inProcessConfiguration, log: settings.inProcessLog ?? .discarding)
        }
    }

    /// Blocking: one `Probe()` call, or the in-process check.
    static func checkNow(_ context: CheckContext) -> Result {
        let failure = { (error: NetworkDetectorError) in
            Result(isReachable: false, statusCode: 0, error: error, connectivity: .unknown, probe: nil)
        }
        switch context.source {
        case .simulated(let network):
            return network.probeResult
        case .inProcess:
            return checkInProcess(context)
        case .auto, .daemon:
            do {
                return Result(try ReachabilityError.translating {
                    try ReachabilityClient(socketPath: context.socketPath, callTimeout: 30).probeBlocking()
                })
            } catch ReachabilityError.daemonNotRunning(let path) {
                return context.source == .auto ? checkInProcess(context) : failure(.daemonNotRunning(socketPath: path))
            } catch ReachabilityClientError.remote(let error) where error.name == VarlinkError.probeDisabled.name {
                return failure(.probeDisabled)
            } catch {
                return failure(.daemon("\(error)"))
            }
        }
    }

    /// reachd's check, run here: over the primary interface of a short-lived monitor's status.
    static func checkInProcess(_ context: CheckContext) -> Result {
        let probe = context.services.connectivity
        guard probe.enabled else {
            return Result(isReachable: false, statusCode: 0, error: .probeDisabled, connectivity: .unknown, probe: nil)
        }
        var services = context.services
        services.connectivity.enabled = false   // the check below is the one-shot's own
        let settings = FeedSettings(source: .inProcess, socketPath: context.socketPath,
                                    monitorConfiguration: context.monitorConfiguration, services: services, log: context.log)
        let status: Status
        do {
            status = try StatusFeed.currentStatus(settings: settings).0
        } catch {
            return Result(isReachable: false, statusCode: 0, error: .probeFailed("\(error)"), connectivity: .unknown, probe: nil)
        }
        return Result(ConnectivityChecker.checkOnce(probe, path: ProbePath(status),
                                                    networkNamespace: context.monitorConfiguration.networkNamespace))
    }

    /// The machine's connectivity, then every change of it (repeats dropped). Each access makes
    /// an independent stream that ends when the consumer stops. From reachd's event stream; with
    /// no daemon, from the in-process monitor and its own connectivity check
    /// (`inProcessServices.connectivity`), so `.portal` and `.full` are known there too.
    public var connectivityChanges: AsyncStream<Connectivity> {
        let source = self.source, socketPath = self.socketPath
        let settings = self.settings.withLock { settings in
            FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: settings.inProcessConfiguration,
                         services: settings.inProcessServices, log: settings.inProcessLog ?? .discarding)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Connectivity.self, bufferingPolicy: .unbounded)
        let feed = StatusFeed(settings: settings)
        let last = SharedMutex<Connectivity?>(nil)
        do {
            try feed.start(requireDaemon: false) { status, _ in
                if last.replaceIfChanged(with: status.connectivity) { continuation.yield(status.connectivity) }
            }
        } catch {
            continuation.finish()
        }
        continuation.onTermination = { _ in feed.stop() }
        return stream
    }
}
