import Foundation
import ReachabilityCore

/// Answers `io.reachd.Reachability.Check`: validates the host, resolves it, asks the kernel for
/// the route to each address (for TCP to `port`, when given, so that policy routing by port
/// counts), and judges the result against the monitor's status (`HostEvaluator`). It never
/// connects to the host: a daemon that connected anywhere for anyone would tell a caller without
/// network access which ports are open. Clients connect themselves (`HostCheck.withTCP`).
///
/// Every check runs on a thread of its own, never on the monitor's queue or the caller's: a slow
/// resolver or a TCP connect that times out holds up nobody else. The completion is called once,
/// on that thread.
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

    /// - Parameter resolver: the name resolver; by default one built from `configuration`.
    public init(configuration: Configuration = Configuration(), resolver: HostResolver? = nil) {
        self.configuration = configuration
        var resolverConfiguration = HostResolver.Configuration()
        resolverConfiguration.timeout = configuration.resolveTimeout
        resolverConfiguration.hostsFile = configuration.hostsFile
        resolverConfiguration.networkNamespace = configuration.networkNamespace
        self.resolver = resolver ?? HostResolver(configuration: resolverConfiguration)
    }

    /// Checks `host` (a name or an address literal); `port` selects the route for TCP to it.
    /// `status` is the monitor's current status (`ReachabilityMonitor.status`).
    public func check(host: String, port: Int?, status: Status,
                      completion: @escaping @Sendable (Result<HostCheck, HostCheckError>) -> Void) {
        check(host: host, port: port, status: { status }, completion: completion)
    }

    /// As `check(host:port:status:completion:)`, reading the status when the look-ups are done,
    /// so a check that waited on the resolver judges against the newest status.
    public func check(host: String, port: Int?, status: @escaping @Sendable () -> Status,
                      completion: @escaping @Sendable (Result<HostCheck, HostCheckError>) -> Void) {
        let thread = Thread { [self] in completion(checkNow(host: host, port: port, status: status)) }
        thread.name = "reachd.check"
        thread.start()
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
        let addresses: [String]
        switch resolver.resolve(spec, host: host) {
        case let .failure(error): return .failure(error)
        case let .success(resolved): addresses = resolved
        }

        let lookups = routeLookups(addresses, tcpPort: port)
        return .success(HostEvaluator.evaluate(host: host, lookups: lookups, status: status()))
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
