import Dispatch
import FoundationEssentials
import ReachabilityCore
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
                      resolver: HostResolver?, tls: TLSContext? = nil) -> Check {
        var api: HTTPProbe.Request?
        if let uri = path.captivePortalApi, let url = try? ProbeURL(uri), url.isHTTPS {
            api = HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                    timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                    maxBodyBytes: CaptivePortalAPI.maxBytes, resolver: resolver, interfaceIndex: path.index,
                                    caFile: configuration.caFile, accept: CaptivePortalAPI.mediaType, tls: tls)
        }
        do {
            let url = try ProbeURL(configuration.url)
            return .request(HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                              timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                              resolver: resolver, interfaceIndex: path.index,
                                              caFile: configuration.caFile, tls: tls), api: api)
        } catch {
            return .verdict(ProbeVerdict.unknown(url: configuration.url, error: error.description, at: Date()))
        }
    }

    /// The verdict on one HTTP check's result; `nat64` when the answer came from an address in
    /// the NAT64 well-known prefix (DNS64 synthesized it). An answer speaks for the family of
    /// the address it came from (a check of both families at once, a standby uplink's, tells no
    /// other apart; `runFamilies` sets each family's own).
    static func verdict(_ configuration: Configuration, _ result: HTTPProbe.Result) -> Probe {
        var probe = ProbeVerdict.probe(url: configuration.url, expectedResponse: configuration.response,
                                       outcome: result.outcome, rttMs: result.rttMs, checkedAt: Date())
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

    /// Runs one check on the calling thread: the API first when there is one, then the ordinary
    /// check, which is the evidence (`CaptivePortalAPI.verdict`). `checked` sees each request
    /// that ran to its end, with its method and verdict; `disagreed` the note when the API said
    /// captive and the ordinary check did not believe it.
    static func run(_ configuration: Configuration, request: HTTPProbe.Request, api: HTTPProbe.Request?,
                    handle: HTTPProbe.Handle, checked: (Method, Probe) -> Void = { _, _ in },
                    disagreed: (String) -> Void = { _ in }) -> Probe {
        var apiAnswer: (state: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, rttMs: Double?)?
        if let api {
            let result = HTTPProbe.run(api, handle: handle)
            let state = CaptivePortalAPI.state(of: result.outcome)
            if !handle.isCancelled { checked(.api, apiVerdict(state, api: api.url.string, rttMs: result.rttMs)) }
            apiAnswer = (state, result.rttMs)
        }
        let probe = verdict(configuration, HTTPProbe.run(request, handle: handle))
        if !handle.isCancelled { checked(.http, probe) }
        guard let apiAnswer, let api else { return probe }
        let (merged, disagreement) = CaptivePortalAPI.verdict(apiAnswer.state, api: api.url.string, apiRttMs: apiAnswer.rttMs,
                                                              checked: probe, checkedAt: Date())
        if let disagreement, !handle.isCancelled { disagreed(disagreement) }
        return merged
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
    /// a thread of `pool` (on this thread after the other when the pool is full), the IPv6 one,
    /// with the captive-portal API, on this thread. Never more than one request of a family in
    /// flight. The verdict is the better family's, with each family's beside it
    /// (`ProbeVerdict.combined`).
    static func runFamilies(_ configuration: Configuration, request: HTTPProbe.Request, api: HTTPProbe.Request?,
                            families: [AddressFamily], path: ProbePath, handle: HTTPProbe.Handle, pool: WorkerPool,
                            checked: @escaping @Sendable (Method, Probe) -> Void = { _, _ in },
                            disagreed: @escaping @Sendable (String) -> Void = { _ in }) -> Probe {
        guard families.count == 2 else {
            let family = families.first
            let probe = run(configuration, request: family.map { request.only($0, via: path.way(for: $0)) } ?? request, api: api,
                            handle: handle,
                            checked: checked, disagreed: disagreed)
            switch family {
            case .ipv4?: return ProbeVerdict.combined(ipv4: probe, ipv6: nil) ?? probe
            case .ipv6?: return ProbeVerdict.combined(ipv4: nil, ipv6: probe) ?? probe
            case nil: return probe
            }
        }
        let ipv4Request = request.only(.ipv4, via: path.way(for: .ipv4))
        let box = SharedMutex<Probe?>(nil)
        let done = DispatchSemaphore(value: 0)
        let submitted = pool.submit {
            let probe = run(configuration, request: ipv4Request, api: nil, handle: handle, checked: checked)
            box.withLock { $0 = probe }
            done.signal()
        }
        let ipv6 = run(configuration, request: request.only(.ipv6, via: path.way(for: .ipv6)), api: api, handle: handle, checked: checked,
                       disagreed: disagreed)
        let ipv4: Probe
        if submitted {
            // The IPv4 check is bounded by the same Timeout= and the same handle.
            done.wait()
            ipv4 = box.withLock { $0 } ?? ProbeVerdict.unknown(url: configuration.url, error: "no IPv4 verdict", at: Date())
        } else {
            ipv4 = run(configuration, request: ipv4Request, api: nil, handle: handle, checked: checked)
        }
        return ProbeVerdict.combined(ipv4: ipv4, ipv6: ipv6) ?? ipv6
    }

    /// What an API request alone says, for metrics: `full` for `captive: false`, `limited` for
    /// an API that failed.
    private static func apiVerdict(_ state: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, api: String,
                                   rttMs: Double?) -> Probe {
        switch state {
        case .success(let said):
            return Probe(url: api, result: said.captive ? .portal : .full, httpStatus: 200, rttMs: rttMs, checkedAt: Date())
        case .failure(let failure):
            return Probe(url: api, result: .limited, error: failure.message, checkedAt: Date())
        }
    }

    /// One check of `path` on the calling thread, with no checker running: the verdict a
    /// running checker would publish for it. A nil path (not reachable) is `none` at once.
    /// For one-shot callers (the app API's `checkNow` without a daemon).
    public static func checkOnce(_ configuration: Configuration, path: ProbePath?, networkNamespace: String?) -> Probe {
        guard let path else { return ProbeVerdict.notReachable(url: configuration.url, at: Date()) }
        switch check(configuration, path: path, networkNamespace: networkNamespace, resolver: nil) {
        case .verdict(let probe): return probe
        case .request(let request, let api):
            return runFamilies(configuration, request: request, api: api, families: families(request, path: path), path: path,
                               handle: HTTPProbe.Handle(), pool: HTTPProbe.defaultPool)
        }
    }
}
