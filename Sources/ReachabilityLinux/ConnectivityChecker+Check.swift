import FoundationEssentials
import ReachabilityCore

extension ConnectivityChecker {
    /// What one check of a path needs: an HTTP request, or (an URL that cannot be checked) the
    /// verdict already.
    enum Check {
        case request(HTTPProbe.Request)
        case verdict(Probe)
    }

    /// The HTTP request that checks `path` with `configuration`: bound to the path's interface,
    /// with its addresses as fallback sources.
    static func check(_ configuration: Configuration, path: ProbePath, networkNamespace: String?,
                      resolver: HostResolver?) -> Check {
        do {
            let url = try ProbeURL(configuration.url)
            return .request(HTTPProbe.Request(url: url, interface: path.interface, sourceAddresses: path.sourceAddresses,
                                              timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace,
                                              resolver: resolver, interfaceIndex: path.index))
        } catch {
            return .verdict(ProbeVerdict.unknown(url: configuration.url, error: error.description, at: Date()))
        }
    }

    /// The verdict on one HTTP check's result.
    static func verdict(_ configuration: Configuration, _ result: HTTPProbe.Result) -> Probe {
        ProbeVerdict.probe(url: configuration.url, expectedResponse: configuration.response,
                           outcome: result.outcome, rttMs: result.rttMs, checkedAt: Date())
    }

    /// One check of `path` on the calling thread, with no checker running: the verdict a
    /// running checker would publish for it. A nil path (not reachable) is `none` at once.
    /// For one-shot callers (the app API's `checkNow` without a daemon).
    public static func checkOnce(_ configuration: Configuration, path: ProbePath?, networkNamespace: String?) -> Probe {
        guard let path else { return ProbeVerdict.notReachable(url: configuration.url, at: Date()) }
        switch check(configuration, path: path, networkNamespace: networkNamespace, resolver: nil) {
        case .verdict(let probe): return probe
        case .request(let request): return verdict(configuration, HTTPProbe.run(request))
        }
    }
}
