import FoundationEssentials
import ReachabilityCore

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

    /// The verdict on one HTTP check's result.
    static func verdict(_ configuration: Configuration, _ result: HTTPProbe.Result) -> Probe {
        ProbeVerdict.probe(url: configuration.url, expectedResponse: configuration.response,
                           outcome: result.outcome, rttMs: result.rttMs, checkedAt: Date())
    }

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
        case .request(let request, let api): return run(configuration, request: request, api: api, handle: HTTPProbe.Handle())
        }
    }
}
