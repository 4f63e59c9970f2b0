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
                      resolver: HostResolver?) -> Check {
        var api: HTTPProbe.Request?
        if let uri = path.captivePortalApi, let url = try? ProbeURL(uri), url.isHTTPS {
            api = HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                    timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                    maxBodyBytes: CaptivePortalAPI.maxBytes, resolver: resolver, interfaceIndex: path.index,
                                    caFile: configuration.caFile, accept: CaptivePortalAPI.mediaType)
        }
        do {
            let url = try ProbeURL(configuration.url)
            return .request(HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                              timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                              resolver: resolver, interfaceIndex: path.index,
                                              caFile: configuration.caFile), api: api)
        } catch {
            return .verdict(ProbeVerdict.unknown(url: configuration.url, error: error.description, at: Date()))
        }
    }

    /// The verdict on one HTTP check's result.
    static func verdict(_ configuration: Configuration, _ result: HTTPProbe.Result) -> Probe {
        ProbeVerdict.probe(url: configuration.url, expectedResponse: configuration.response,
                           outcome: result.outcome, rttMs: result.rttMs, checkedAt: Date())
    }

    /// Runs one check on the calling thread: the API first when there is one (its `captive:
    /// true` is the verdict), then the ordinary check. `checked` sees each request that ran to
    /// its end, with its method and verdict.
    static func run(_ configuration: Configuration, request: HTTPProbe.Request, api: HTTPProbe.Request?,
                    handle: HTTPProbe.Handle, checked: (Method, Probe) -> Void = { _, _ in }) -> Probe {
        var apiState: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>?
        if let api {
            let result = HTTPProbe.run(api, handle: handle)
            let state = CaptivePortalAPI.state(of: result.outcome)
            switch state {
            case .success(let said) where said.captive:
                let probe = CaptivePortalAPI.portal(said, api: api.url.string, rttMs: result.rttMs, checkedAt: Date())
                if !handle.isCancelled { checked(.api, probe) }
                return probe
            case .success, .failure:
                if !handle.isCancelled {
                    checked(.api, apiVerdict(state, api: api.url.string, rttMs: result.rttMs))
                }
            }
            apiState = state
        }
        let probe = verdict(configuration, HTTPProbe.run(request, handle: handle))
        if !handle.isCancelled { checked(.http, probe) }
        guard let apiState, let api else { return probe }
        return CaptivePortalAPI.merge(apiState, api: api.url.string, into: probe)
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
