import Dispatch
import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityLinux

/// Why a `NetworkDetector` check did not find the internet answering.
public enum NetworkDetectorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No reachd answers; the library cannot run the connectivity check in-process.
    case daemonNotRunning(socketPath: String)
    /// reachd runs with `[Connectivity] Enabled=no`.
    case probeDisabled
    /// The machine has no usable path (no HTTP request was made).
    case notReachable
    /// An HTTP answer that is not the expected one: a captive portal (where it redirected to).
    case captivePortal(portalURL: String?)
    /// The check failed: timeout, refused, DNS failure (the probe's error text).
    case probeFailed(String)
    /// Talking to reachd failed (the client error's text).
    case daemon(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let path): return "reachd is not running (no socket at \(path))"
        case .probeDisabled: return "the connectivity check is disabled in reachd's configuration"
        case .notReachable: return "the network is not reachable"
        case .captivePortal(let url): return "captive portal" + (url.map { " at \($0)" } ?? "")
        case .probeFailed(let reason): return "connectivity check failed: \(reason)"
        case .daemon(let reason): return "reachd: \(reason)"
        }
    }
}

/// Seed 004's NetworkDetector: does the internet really answer?
///
/// ```swift
/// let result = await NetworkDetector.shared.check()
/// if result.isReachable { … } else { print(result.statusCode as Any, result.error as Any) }
/// for await connectivity in NetworkDetector.shared.connectivityChanges { … }   // .full, .portal, …
/// ```
/// `check()` asks reachd to run its connectivity check now (`Probe()`), with the daemon's URL
/// and rules. Without a daemon (`.auto`) or with `.inProcess`, the library runs the same HTTP
/// check itself (`HTTPProbe` over the primary interface, NetworkManager's verdict rules) against
/// `inProcessProbe.url`.
public final class NetworkDetector: @unchecked Sendable {
    /// The detector on the default socket (`REACHD_SOCKET`, then the default paths).
    public static let shared = NetworkDetector()

    /// The answer of one check.
    public struct Result: Sendable, Equatable, CustomStringConvertible {
        /// True when the expected answer came back (`connectivity == .full`).
        public let isReachable: Bool
        /// The HTTP status of the check's answer (204, 302, …), nil without one.
        public let statusCode: Int?
        /// Why it is not reachable; nil when it is.
        public let error: NetworkDetectorError?
        public let connectivity: Connectivity
        /// The daemon's full probe result (URL, RTT, portal URL, time).
        public let probe: Probe?

        public init(isReachable: Bool, statusCode: Int?, error: NetworkDetectorError?, connectivity: Connectivity, probe: Probe?) {
            self.isReachable = isReachable; self.statusCode = statusCode; self.error = error
            self.connectivity = connectivity; self.probe = probe
        }

        /// The result of a probe, as the seed's callers expect it.
        public init(_ probe: Probe) {
            let error: NetworkDetectorError?
            switch probe.result {
            case .full: error = nil
            case .portal: error = .captivePortal(portalURL: probe.portalUrl)
            case .none: error = .notReachable
            case .limited, .unknown: error = .probeFailed(probe.error ?? "no answer from \(probe.url)")
            }
            self.init(isReachable: probe.result == .full, statusCode: probe.httpStatus, error: error,
                      connectivity: probe.result, probe: probe)
        }

        public var description: String {
            var text = "\(connectivity.rawValue)"
            if let statusCode { text += " (HTTP \(statusCode))" }
            if let error { text += ": \(error)" }
            return text
        }
    }

    public let source: ReachabilitySource
    public let socketPath: String
    /// Configuration of the in-process monitor behind `connectivityChanges` when no daemon answers.
    public var inProcessConfiguration: ReachabilityMonitor.Configuration {
        get { lock.withLock { _inProcessConfiguration } }
        set { lock.withLock { _inProcessConfiguration = newValue } }
    }
    /// Where `checkNetworkReachability`'s completion runs (default: a private serial queue).
    public var completionQueue: DispatchQueue {
        get { lock.withLock { _completionQueue } }
        set { lock.withLock { _completionQueue = newValue } }
    }

    /// The in-process check: which URL, what answer counts as the internet (empty: HTTP 204 or an
    /// empty 200, as reachd's `[Connectivity]`), and how long to wait. The URL defaults to
    /// reachd's default; point it at your own endpoint.
    public struct InProcessProbe: Sendable, Equatable {
        public var url: String
        public var expectedResponse: String
        public var timeout: TimeInterval

        public init(url: String = ConnectivityChecker.Configuration().url, expectedResponse: String = "", timeout: TimeInterval = 5) {
            self.url = url; self.expectedResponse = expectedResponse; self.timeout = timeout
        }
    }

    /// Used when no daemon answers (`.auto`) and always with `.inProcess`.
    public var inProcessProbe: InProcessProbe {
        get { lock.withLock { _inProcessProbe } }
        set { lock.withLock { _inProcessProbe = newValue } }
    }

    private let lock = NSLock()
    private var _inProcessProbe = InProcessProbe()
    private var _inProcessConfiguration = ReachabilityMonitor.Configuration()
    private var _completionQueue = DispatchQueue(label: "reachd.networkdetector.completion")

    /// - Parameters:
    ///   - source: `.auto` asks reachd, else checks in-process; `.daemon` only reachd
    ///     (`daemonNotRunning` without one); `.inProcess` always checks itself
    ///     (`connectivityChanges` then yields only `.unknown`/`.none`: nobody probes continuously).
    ///   - socketPath: reachd's socket; nil: `REACHD_SOCKET`, then the default paths.
    public init(source: ReachabilitySource = .auto, socketPath: String? = nil) {
        self.source = source
        self.socketPath = resolvedSocketPath(socketPath)
    }

    /// Runs the connectivity check now and tells whether the internet answers.
    public func check() async -> Result {
        let context = checkContext
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Self.checkNow(context))
            }
        }
    }

    /// The seed's callback form of `check()`; the completion runs on `completionQueue`.
    public func checkNetworkReachability(completion: @escaping @Sendable (Bool, Int?, Error?) -> Void) {
        let context = checkContext, queue = completionQueue
        DispatchQueue.global().async {
            let result = Self.checkNow(context)
            queue.async { completion(result.isReachable, result.statusCode, result.error) }
        }
    }

    /// What one check needs, read once under the lock.
    struct CheckContext: Sendable {
        var socketPath: String
        var source: ReachabilitySource
        var probe: InProcessProbe
        var monitorConfiguration: ReachabilityMonitor.Configuration
    }

    private var checkContext: CheckContext {
        lock.withLock {
            CheckContext(socketPath: socketPath, source: source, probe: _inProcessProbe, monitorConfiguration: _inProcessConfiguration)
        }
    }

    /// Blocking: one `Probe()` call, or the in-process check.
    static func checkNow(_ context: CheckContext) -> Result {
        let failure = { (error: NetworkDetectorError) in
            Result(isReachable: false, statusCode: nil, error: error, connectivity: .unknown, probe: nil)
        }
        switch context.source {
        case .simulated(let network):
            return network.probeResult
        case .inProcess:
            return checkInProcess(context)
        case .auto, .daemon:
            do {
                return Result(try DaemonCalls.probe(socketPath: context.socketPath))
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
        let settings = FeedSettings(source: .inProcess, socketPath: context.socketPath, monitorConfiguration: context.monitorConfiguration)
        let url = context.probe.url
        let status: Status
        do {
            status = try StatusFeed.currentStatus(settings: settings).0
        } catch {
            return Result(isReachable: false, statusCode: nil, error: .probeFailed("\(error)"), connectivity: .unknown, probe: nil)
        }
        guard status.reachable, let primary = status.primary else {
            return Result(ProbeVerdict.notReachable(url: url, at: Date()))
        }
        let probeURL: ProbeURL
        do {
            probeURL = try ProbeURL(url)
        } catch {
            return Result(ProbeVerdict.unknown(url: url, error: error.description, at: Date()))
        }
        let sources = primary.addresses.compactMap { $0.split(separator: "/").first.map(String.init) }
        let request = HTTPProbe.Request(url: probeURL, interface: primary.name, sourceAddresses: sources,
                                        timeout: context.probe.timeout,
                                        networkNamespace: context.monitorConfiguration.networkNamespace)
        let outcome = HTTPProbe.run(request)
        return Result(ProbeVerdict.probe(url: url, expectedResponse: context.probe.expectedResponse,
                                         outcome: outcome.outcome, rttMs: outcome.rttMs, checkedAt: Date()))
    }

    /// The machine's connectivity, then every change of it (repeats dropped), from reachd's event
    /// stream. Each access makes an independent stream that ends when the consumer stops.
    /// Without a daemon (`.auto` falls back in-process) the values are `.unknown`/`.none` until
    /// the daemon appears.
    public var connectivityChanges: AsyncStream<Connectivity> {
        let settings = lock.withLock {
            FeedSettings(source: source, socketPath: socketPath, monitorConfiguration: _inProcessConfiguration)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Connectivity.self, bufferingPolicy: .unbounded)
        let feed = StatusFeed(settings: settings)
        let last = LastValue<Connectivity>()
        do {
            try feed.start(requireDaemon: false) { status, _ in
                if last.replace(with: status.connectivity) { continuation.yield(status.connectivity) }
            }
        } catch {
            continuation.finish()
        }
        continuation.onTermination = { _ in feed.stop() }
        return stream
    }
}
