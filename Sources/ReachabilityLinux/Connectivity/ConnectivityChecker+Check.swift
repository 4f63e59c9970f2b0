import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
#if canImport(Glibc)
import Glibc
#endif

extension ConnectivityChecker {
    /// What one check of a path needs: an HTTP request, or (an URL that cannot be checked) the
    /// verdict already.
    enum Check {
        /// The ordinary HTTP check, after the captive-portal API when the path has one.
        case request(HTTPProbe.Request, api: HTTPProbe.Request?)
        case verdict(Probe)
    }

    /// How a check asked: the captive-portal API, or the ordinary HTTP check (for metrics).
    public enum Method: String, Sendable, CaseIterable {
        case api, http
    }

    /// The HTTP request that checks `path` with `configuration`: bound to the path's interface,
    /// with its addresses as fallback sources; and the request of the path's captive-portal API.
    static func check(_ configuration: Configuration, path: ProbePath, networkNamespace: String?,
                      resolver: HostResolver?, tls: TLSContext? = nil, clock: ReachdClock) -> Check {
        var api: HTTPProbe.Request?
        if let uri = path.captivePortalApi, let url = try? ProbeURL(uri), url.isHTTPS {
            api = HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                    timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                    maxBodyBytes: CaptivePortalAPI.maxBytes, resolver: resolver, interfaceIndex: path.index,
                                    caFile: configuration.caFile, accept: CaptivePortalAPI.mediaType, tls: tls)
            api?.clock = clock
        }
        do {
            let url = try ProbeURL(configuration.url)
            var request = HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                            timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                            resolver: resolver, interfaceIndex: path.index,
                                            caFile: configuration.caFile, tls: tls)
            request.clock = clock
            return .request(request, api: api)
        } catch {
            return .verdict(ProbeVerdict.unknown(url: configuration.url, error: error.description, at: clock.now().wall))
        }
    }

    /// The verdict on one HTTP check's result; `nat64` when the answer came from an address in
    /// the NAT64 well-known prefix (DNS64 synthesized it). An answer speaks for the family of
    /// the address it came from (a check of both families at once, a standby uplink's, tells no
    /// other apart; `runFamilies` sets each family's own).
    static func verdict(_ configuration: Configuration, _ result: HTTPProbe.Result, clock: ReachdClock) -> Probe {
        var probe = ProbeVerdict.probe(url: configuration.url, expectedResponse: configuration.response,
                                       outcome: result.outcome, rttMs: result.rttMs, checkedAt: clock.now().wall)
        if let address = result.address {
            if HostResolver.isFamily(AF_INET6, address) { probe.ipv6Result = probe.result } else { probe.ipv4Result = probe.result }
        }
        if let address = result.address, let bits = AddressBits(address, family: .ipv6),
           bits.hasPrefix(Self.wellKnownNAT64Prefix, length: 96) {
            probe.nat64 = true
        }
        return probe
    }

    /// 64:ff9b::/96 (RFC 6052).
    private static let wellKnownNAT64Prefix = AddressBits(bytes: [0x00, 0x64, 0xff, 0x9b] + [UInt8](repeating: 0, count: 12))

    /// Runs one check: the API first when there is one, then the ordinary check, which is the
    /// evidence (`CaptivePortalAPI.verdict`). Waits for no other thread: each request runs on
    /// a thread of `pool` (an address literal's on the calling thread, which must be one of
    /// `pool`'s or may block), a host name is resolved on the resolver's threads in between.
    /// `completion` runs once, on a thread of `pool`; nil: `pool` could take no more, no verdict.
    /// `checked` sees each request that ran to its end, with its method and verdict;
    /// `disagreed` the note when the API said captive and the ordinary check did not believe it.
    static func run(_ configuration: Configuration, request: HTTPProbe.Request, api: HTTPProbe.Request?,
                    handle: HTTPProbe.Handle, pool: WorkerPool, clock: ReachdClock,
                    checked: @escaping @Sendable (Method, Probe) -> Void = { _, _ in },
                    disagreed: @escaping @Sendable (String) -> Void = { _ in },
                    completion: @escaping @Sendable (Probe?) -> Void) {
        let ordinary: @Sendable ((state: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, rttMs: Double?)?) -> Void = { apiAnswer in
            HTTPProbe.run(request, handle: handle, continuingOn: pool) { result in
                guard let result else { return completion(nil) }
                let probe = verdict(configuration, result, clock: clock)
                if !handle.isCancelled { checked(.http, probe) }
                guard let apiAnswer, let api else { return completion(probe) }
                let (merged, disagreement) = CaptivePortalAPI.verdict(apiAnswer.state, api: api.url.string, apiRttMs: apiAnswer.rttMs,
                                                                      checked: probe, checkedAt: clock.now().wall)
                if let disagreement, !handle.isCancelled { disagreed(disagreement) }
                completion(merged)
            }
        }
        guard let api else { return ordinary(nil) }
        HTTPProbe.run(api, handle: handle, continuingOn: pool) { result in
            guard let result else { return completion(nil) }
            let state = CaptivePortalAPI.state(of: result.outcome)
            if !handle.isCancelled { checked(.api, apiVerdict(state, api: api.url.string, rttMs: result.rttMs, clock: clock)) }
            ordinary((state, result.rttMs))
        }
    }

    /// The families a check of `path` asks: each that has a path, and of an address literal's
    /// URL only its own family. Empty: one check that does not tell the families apart.
    static func families(_ request: HTTPProbe.Request, path: ProbePath) -> [AddressFamily] {
        var families: [AddressFamily] = []
        if path.ipv4 { families.append(.ipv4) }
        if path.ipv6 { families.append(.ipv6) }
        let host = request.url.host
        if HostResolver.isFamily(AF_INET, host) { return families.filter { $0 == .ipv4 } }
        if HostResolver.isFamily(AF_INET6, host) { return families.filter { $0 == .ipv6 } }
        return families
    }

    /// One check of each of `families` (see `families(_:path:)`), both at once: the IPv4 one on
    /// `familyPool`, the IPv6 one, with the captive-portal API, on `pool` (begun on the calling
    /// thread); when `familyPool` is full, the IPv4 one after the other, on `pool`. Never more
    /// than one request of a family in flight. No thread waits for the other: the one that
    /// finishes last calls `completion`, with the better family's verdict and each family's
    /// beside it (`ProbeVerdict.combined`); nil: no thread to run the check on, no verdict.
    static func runFamilies(_ configuration: Configuration, request: HTTPProbe.Request, api: HTTPProbe.Request?,
                            families: [AddressFamily], path: ProbePath, handle: HTTPProbe.Handle,
                            pool: WorkerPool, familyPool: WorkerPool, clock: ReachdClock,
                            checked: @escaping @Sendable (Method, Probe) -> Void = { _, _ in },
                            disagreed: @escaping @Sendable (String) -> Void = { _ in },
                            completion: @escaping @Sendable (Probe?) -> Void) {
        guard families.count == 2 else {
            let family = families.first
            run(configuration, request: family.map { request.only($0, via: path.way(for: $0)) } ?? request, api: api,
                handle: handle, pool: pool, clock: clock, checked: checked, disagreed: disagreed) { probe in
                guard let probe else { return completion(nil) }
                switch family {
                case .ipv4?: completion(ProbeVerdict.combined(ipv4: probe, ipv6: nil) ?? probe)
                case .ipv6?: completion(ProbeVerdict.combined(ipv4: nil, ipv6: probe) ?? probe)
                case nil: completion(probe)
                }
            }
            return
        }
        let ipv4Request = request.only(.ipv4, via: path.way(for: .ipv4))
        let ipv6Request = request.only(.ipv6, via: path.way(for: .ipv6))
        let join = FamilyJoin { ipv4, ipv6 in
            // The IPv6 check carries the API: without it there is no verdict.
            guard let ipv6 else { return completion(nil) }
            let ipv4 = ipv4 ?? ProbeVerdict.unknown(url: configuration.url, error: "no IPv4 verdict", at: clock.now().wall)
            completion(ProbeVerdict.combined(ipv4: ipv4, ipv6: ipv6) ?? ipv6)
        }
        let submitted = familyPool.submit {
            run(configuration, request: ipv4Request, api: nil, handle: handle, pool: familyPool, clock: clock, checked: checked) {
                join.ipv4($0)
            }
        }
        run(configuration, request: ipv6Request, api: api, handle: handle, pool: pool, clock: clock, checked: checked,
            disagreed: disagreed) { ipv6 in
            join.ipv6(ipv6)
            guard !submitted else { return }
            // The IPv4 check is bounded by the same Timeout= and the same handle.
            guard ipv6 != nil else { return join.ipv4(nil) }
            run(configuration, request: ipv4Request, api: nil, handle: handle, pool: pool, clock: clock, checked: checked) {
                join.ipv4($0)
            }
        }
    }

    /// The two families' verdicts of one check, each given once from its own thread; the second
    /// to come hands both on.
    private final class FamilyJoin: Sendable {
        private let verdicts = SharedMutex<(ipv4: Probe??, ipv6: Probe??)>((nil, nil))
        private let both: @Sendable (Probe?, Probe?) -> Void

        init(_ both: @escaping @Sendable (Probe?, Probe?) -> Void) { self.both = both }

        func ipv4(_ probe: Probe?) { arrived { $0.ipv4 = .some(probe) } }
        func ipv6(_ probe: Probe?) { arrived { $0.ipv6 = .some(probe) } }

        private func arrived(_ set: (inout (ipv4: Probe??, ipv6: Probe??)) -> Void) {
            let complete = verdicts.withLock { verdicts -> (Probe?, Probe?)? in
                set(&verdicts)
                guard let ipv4 = verdicts.ipv4, let ipv6 = verdicts.ipv6 else { return nil }
                return (ipv4, ipv6)
            }
            if let (ipv4, ipv6) = complete { both(ipv4, ipv6) }
        }
    }

    /// What an API request alone says, for metrics: `full` for `captive: false`, `limited` for
    /// an API that failed.
    private static func apiVerdict(_ state: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, api: String,
                                   rttMs: Double?, clock: ReachdClock) -> Probe {
        switch state {
        case .success(let said):
            return Probe(url: api, result: said.captive ? .portal : .full, httpStatus: 200, rttMs: rttMs, checkedAt: clock.now().wall)
        case .failure(let failure):
            return Probe(url: api, result: .limited, error: failure.message, checkedAt: clock.now().wall)
        }
    }

    /// One check of `path`, with no checker running, waited for on the calling thread: the
    /// verdict a running checker would publish for it. A nil path (not reachable) is `none` at
    /// once. For one-shot callers (the app API's `checkNow` without a daemon).
    public static func checkOnce(_ configuration: Configuration, path: ProbePath?, networkNamespace: String?,
                                 clock: ReachdClock = .system) -> Probe {
        guard let path else { return ProbeVerdict.notReachable(url: configuration.url, at: clock.now().wall) }
        switch check(configuration, path: path, networkNamespace: networkNamespace, resolver: nil, clock: clock) {
        case .verdict(let probe): return probe
        case .request(let request, let api):
            let verdict = SharedMutex<Probe?>(nil)
            let done = DispatchSemaphore(value: 0)
            // Begun on a thread of the pool, as every check is: the caller only waits.
            let submitted = HTTPProbe.defaultPool.submit {
                runFamilies(configuration, request: request, api: api, families: families(request, path: path), path: path,
                            handle: HTTPProbe.Handle(), pool: HTTPProbe.defaultPool, familyPool: HTTPProbe.defaultPool,
                            clock: clock) { probe in
                    verdict.withLock { $0 = probe }
                    done.signal()
                }
            }
            if submitted { done.wait() }
            return verdict.withLock { $0 } ?? ProbeVerdict.unknown(url: configuration.url, error: "no thread free to run the check",
                                                                 at: clock.now().wall)
        }
    }
}
