import Foundation
import ReachabilityCore

/// Answers `io.reachd.Reachability.Check`: validates the host, resolves it, asks the kernel for
/// the route to each address, optionally connects over TCP, and judges the result against the
/// monitor's status (`HostEvaluator`).
///
/// Every check runs on a thread of its own, never on the monitor's queue or the caller's: a slow
/// resolver or a TCP connect that times out holds up nobody else. The completion is called once,
/// on that thread.
public final class HostChecker: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Where route look-ups, TCP sockets and resolver sockets are created (tests).
        public var networkNamespace: String? = nil
        /// The longest wait for a name to resolve; then the answer is HostNotFound.
        public var resolveTimeout: TimeInterval = 5
        /// The budget for TCP connects of one check (the addresses are tried in turn within it).
        public var connectTimeout: TimeInterval = 5
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

    /// Checks `host` (a name or an address literal), and with `port` a TCP connect to it.
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

    /// Runs one check on the calling thread (blocks for up to the resolve and connect timeouts).
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

        let lookups = routeLookups(addresses)
        var tcp: (address: String, check: TCPCheck)?
        if let port {
            tcp = connect(port: port, lookups: lookups, status: status())
        }
        return .success(HostEvaluator.evaluate(host: host, lookups: lookups, status: status(), tcp: tcp))
    }

    /// One route look-up per address. A netlink socket that cannot be opened (never expected)
    /// makes every address "unreachable" with the reason, rather than failing the call.
    private func routeLookups(_ addresses: [String]) -> [RouteLookupResult] {
        func family(_ address: String) -> AddressFamily { address.contains(":") ? .ipv6 : .ipv4 }
        let lookup: RouteLookup
        do {
            lookup = try RouteLookup(networkNamespace: configuration.networkNamespace)
        } catch {
            return addresses.map { RouteLookupResult(address: $0, family: family($0), type: .unreachable, error: "\(error)") }
        }
        return addresses.map { address in
            do { return try lookup.lookup(address) }
            catch { return RouteLookupResult(address: address, family: family(address), type: .unreachable, error: "\(error)") }
        }
    }

    /// Connects to the addresses with a usable route, in order, until one answers; each attempt
    /// gets what is left of `connectTimeout`. Without a usable route nothing is attempted.
    private func connect(port: Int, lookups: [RouteLookupResult], status: Status) -> (address: String, check: TCPCheck) {
        let candidates = lookups.filter { HostEvaluator.verdict(for: $0, status: status).usable }
        guard let first = candidates.first else {
            let address = lookups.first?.address ?? ""
            return (address, TCPCheck(port: port, connected: false, rttMs: nil, error: "not attempted: no usable route"))
        }
        let deadline = Date().addingTimeInterval(configuration.connectTimeout)
        var last = (address: first.address, check: TCPCheck(port: port, connected: false))
        for route in candidates {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            // Local destinations go through lo; binding to the owning interface would fail them.
            let device = route.type == .local ? nil : route.link?.name
            let check = TCPConnector.connect(address: route.address, port: port, source: route.type == .local ? nil : route.preferredSource,
                                             device: device, timeout: left, networkNamespace: configuration.networkNamespace)
            last = (route.address, check)
            if check.connected { break }
        }
        return last
    }
}
