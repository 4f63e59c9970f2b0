import Dispatch
import FoundationEssentials
import ReachabilityCore
import Synchronization

/// Answers `io.reachd.Reachability.Check`: validates the host, resolves it, asks the kernel for
/// the route to each address (for TCP to `port`, when given, so that policy routing by port
/// counts), and judges the result against the monitor's status (`HostEvaluator`). It never
/// connects to the host: a daemon that connected anywhere for anyone would tell a caller without
/// network access which ports are open. Clients connect themselves (`HostCheck.withTCP`).
///
/// Every check runs on a thread of a bounded `WorkerPool`, never on the monitor's queue
/// or the caller's: a slow resolver holds up nobody else, and a pool with no thread free answers
/// `busy` at once. The completion is called once: on that thread, or when the resolver does not
/// answer within `resolveTimeout`, from a timer.
public final class HostChecker: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Where route look-ups and resolver sockets are created (tests).
        public var networkNamespace: String? = nil
        /// The longest wait for a name to resolve; then the answer is HostNotFound.
        public var resolveTimeout: TimeInterval = 5
        /// Resolve from this hosts(5) file only (tests).
        public var hostsFile: String? = nil
        public init() {}
    }

    public let configuration: Configuration
    private let resolver: HostResolver
    private let pool: WorkerPool

    /// - Parameters:
    ///   - resolver: the name resolver; by default one built from `configuration`.
    ///   - pool: the threads checks run on.
    public init(configuration: Configuration = Configuration(), resolver: HostResolver? = nil, pool: WorkerPool = .lookups) {
        self.configuration = configuration
        self.pool = pool
        var resolverConfiguration = HostResolver.Configuration()
        resolverConfiguration.timeout = configuration.resolveTimeout
        resolverConfiguration.hostsFile = configuration.hostsFile
        resolverConfiguration.networkNamespace = configuration.networkNamespace
        self.resolver = resolver ?? HostResolver(configuration: resolverConfiguration, pool: pool)
    }

    /// Checks `host` (a name or an address literal); `port` selects the route for TCP to it.
    /// `status` is the monitor's current status (`ReachabilityMonitor.status`).
    public func check(host: String, port: Int?, status: Status,
                      completion: @escaping @Sendable (Result<HostCheck, HostCheckError>) -> Void) {
        check(host: host, port: port, status: { status }, completion: completion)
    }

    /// As `check(host:port:status:completion:)`, reading the status when the look-ups are done,
    /// so a check that waited on the resolver judges against the newest status.
    ///
    /// - Returns: cancels the check: one not yet started never runs, and the completion is not
    ///   called after `cancel()` (a `getaddrinfo` already running finishes on its own).
    @discardableResult
    public func check(host: String, port: Int?, status: @escaping @Sendable () -> Status,
                      completion: @escaping @Sendable (Result<HostCheck, HostCheckError>) -> Void) -> Cancellation {
        let cancellation = Cancellation(completion)
        let spec: HostSpec
        do {
            spec = try HostName.parse(host)
            try HostName.validatePort(port)
        } catch {
            cancellation.finish(.failure(error))
            return cancellation
        }
        let ticket = pool.submitCancellable { [self] in
            guard cancellation.start() else { return }
            cancellation.finish(evaluate(host: host, port: port, addresses: resolver.resolveHere(spec, host: host), status: status))
        }
        guard let ticket else {
            cancellation.finish(.failure(.busy(reason: "no look-up thread free")))
            return cancellation
        }
        let pool = self.pool
        cancellation.setOnCancel { pool.withdraw(ticket) }
        // A caller is answered within the resolver's timeout: Busy when no thread took the
        // check by then (all of them wait on hanging look-ups), HostNotFound when its name
        // did not resolve in time.
        let timeout = resolver.configuration.timeout
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            if cancellation.withdrawIfWaiting() {
                pool.withdraw(ticket)
                cancellation.finish(.failure(.busy(reason: "no look-up thread free within \(HostResolver.seconds(timeout))")))
            } else if case .name = spec {
                cancellation.finish(.failure(.hostNotFound(host: host, reason: "resolution timed out after \(HostResolver.seconds(timeout))")))
            }
        }
        return cancellation
    }

    /// Stops one check (`check(host:port:status:completion:)`'s result); completes it once.
    public final class Cancellation: @unchecked Sendable {
        private struct State {
            var completion: (@Sendable (Result<HostCheck, HostCheckError>) -> Void)?
            var started = false
            var withdrawn = false
            /// Takes the check out of the pool's queue.
            var onCancel: (@Sendable () -> Void)?
        }
        private let state: Mutex<State>

        func setOnCancel(_ body: @escaping @Sendable () -> Void) { state.withLock { $0.onCancel = body } }

        init(_ completion: @escaping @Sendable (Result<HostCheck, HostCheckError>) -> Void) {
            state = Mutex(State(completion: completion))
        }

        public var isCancelled: Bool { state.withLock { $0.completion == nil } }

        /// The completion will not be called; a check still waiting for a thread never runs.
        public func cancel() {
            let withdraw = state.withLock { state -> (@Sendable () -> Void)? in
                state.completion = nil
                return state.started ? nil : state.onCancel
            }
            withdraw?()
        }

        /// A pool thread takes the check: false when it was cancelled or given up on.
        func start() -> Bool {
            state.withLock { state in
                guard state.completion != nil, !state.withdrawn else { return false }
                state.started = true
                return true
            }
        }

        /// Gives up on a check that no thread has taken yet; false when one has.
        func withdrawIfWaiting() -> Bool {
            state.withLock { state in
                guard !state.started else { return false }
                state.withdrawn = true
                return true
            }
        }

        /// Calls the completion unless it was called or cancelled before.
        func finish(_ result: Result<HostCheck, HostCheckError>) {
            let body = state.withLock { state -> (@Sendable (Result<HostCheck, HostCheckError>) -> Void)? in
                defer { state.completion = nil }
                return state.completion
            }
            body?(result)
        }
    }

    /// The async form.
    public func check(host: String, port: Int?, status: Status) async -> Result<HostCheck, HostCheckError> {
        await withCheckedContinuation { continuation in
            check(host: host, port: port, status: status) { continuation.resume(returning: $0) }
        }
    }

    /// Runs one check on the calling thread (blocks for up to the resolve timeout).
    public func checkNow(host: String, port: Int?, status: () -> Status) -> Result<HostCheck, HostCheckError> {
        let spec: HostSpec
        do {
            spec = try HostName.parse(host)
            try HostName.validatePort(port)
        } catch {
            return .failure(error)
        }
        return evaluate(host: host, port: port, addresses: resolver.resolve(spec, host: host), status: status)
    }

    private func evaluate(host: String, port: Int?, addresses: Result<[String], HostCheckError>,
                          status: () -> Status) -> Result<HostCheck, HostCheckError> {
        switch addresses {
        case let .failure(error):
            return .failure(error)
        case let .success(addresses):
            let lookups = routeLookups(addresses, tcpPort: port)
            return .success(HostEvaluator.evaluate(host: host, lookups: lookups, status: status()))
        }
    }

    /// One route look-up per address. A netlink socket that cannot be opened (never expected)
    /// makes every address "unreachable" with the reason, rather than failing the call.
    private func routeLookups(_ addresses: [String], tcpPort: Int?) -> [RouteLookupResult] {
        func family(_ address: String) -> AddressFamily { address.contains(":") ? .ipv6 : .ipv4 }
        let lookup: RouteLookup
        do {
            lookup = try RouteLookup(networkNamespace: configuration.networkNamespace)
        } catch {
            return addresses.map { RouteLookupResult(address: $0, family: family($0), type: .unreachable, error: "\(error)") }
        }
        return addresses.map { address in
            do { return try lookup.lookup(address, tcpPort: tcpPort) }
            catch { return RouteLookupResult(address: address, family: family(address), type: .unreachable, error: "\(error)") }
        }
    }
}
