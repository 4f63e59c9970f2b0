import FoundationEssentials

/// Turns the outcome of an HTTP check into a `Probe` verdict (NetworkManager's rules):
///
/// - not reachable at all → `none`;
/// - the expected answer → `full`: with an empty `Response=`, HTTP 204 or a 200 with an empty
///   body; with a `Response=`, a 200 whose body starts with it (surrounding white space ignored);
/// - any other HTTP answer → `portal` (a redirect, a login page, 511, an error page):
///   something between us and the internet answers in its place;
/// - no HTTP answer (timeout, refused, reset, DNS failure, no route, garbage) → `limited`;
/// - a URL reachd cannot check → `unknown`.
///
/// `portalUrl` is where a user logs in: the redirect target (a relative `Location` resolved
/// against the URL), else a `<meta http-equiv="refresh">` target in the page, else — for a
/// page served in place of the expected answer — the check URL itself, which shows that page.
public enum ProbeVerdict {
    /// The verdict for `outcome` of a check of `url`.
    public static func probe(url: String, expectedResponse: String, outcome: ProbeOutcome, reachable: Bool = true,
                             rttMs: Double? = nil, checkedAt: Date) -> Probe {
        guard reachable else { return notReachable(url: url, at: checkedAt) }
        switch outcome {
        case .failure(let failure):
            let result: Connectivity
            switch failure.kind {
            case .timeout, .refused, .reset, .dnsFailure, .unreachable, .malformed, .tls, .other: result = .limited
            case .unsupported: result = .unknown
            }
            return Probe(url: url, result: result, httpStatus: nil, rttMs: nil, portalUrl: nil,
                         error: TerminalText.escaped(failure.message), checkedAt: checkedAt,
                         failedStage: result == .unknown ? nil : failure.failedStage)
        case .response(let response):
            let verdict = judge(response, url: url, expectedResponse: expectedResponse)
            return Probe(url: url, result: verdict.result, httpStatus: response.status, rttMs: rttMs,
                         portalUrl: verdict.portalUrl, error: verdict.error, checkedAt: checkedAt)
        }
    }

    /// One verdict from the checks of each family (nil: the family was not checked): the better
    /// one's probe (`Connectivity.best`; IPv6 first when they tie, as apps try it first), with
    /// each family's verdict beside it. With one family checked it is that family's probe.
    public static func combined(ipv4: Probe?, ipv6: Probe?) -> Probe? {
        guard let chosen = pick(ipv4, ipv6) else { return nil }
        var probe = chosen
        probe.ipv4Result = ipv4?.result
        probe.ipv6Result = ipv6?.result
        return probe
    }

    private static func pick(_ ipv4: Probe?, _ ipv6: Probe?) -> Probe? {
        guard let ipv4 else { return ipv6 }
        guard let ipv6 else { return ipv4 }
        return ipv4.result.rank > ipv6.result.rank ? ipv4 : ipv6
    }

    /// The probe published while the machine is not reachable: no check is made.
    public static func notReachable(url: String, at date: Date) -> Probe {
        Probe(url: url, result: .none, error: "not reachable: no usable default route", checkedAt: date)
    }

    /// The probe for a check that could not run at all (bad URL): connectivity stays unknown.
    public static func unknown(url: String, error: String, at date: Date) -> Probe {
        Probe(url: url, result: .unknown, error: error, checkedAt: date)
    }

    static func judge(_ response: HTTPResponse, url: String, expectedResponse: String)
        -> (result: Connectivity, portalUrl: String?, error: String?) {
        let expected = expectedResponse.trimmingSpaces
        let body = String(decoding: response.body, as: UTF8.self)
        let isExpected: Bool
        if expected.isEmpty {
            isExpected = response.status == 204 || (response.status == 200 && body.trimmingSpaces.isEmpty)
        } else {
            isExpected = response.status == 200 && body.trimmingSpaces.hasPrefix(expected)
        }
        if isExpected { return (.full, nil, nil) }

        let base = try? ProbeURL(url)
        if (300...399).contains(response.status) {
            guard let location = response.header("Location"), !location.trimmingSpaces.isEmpty else {
                return (.portal, nil, "HTTP \(response.status) redirect without a Location")
            }
            let target = base?.resolve(location) ?? location.trimmingSpaces
            guard isCleanURLText(location.trimmingSpaces), let portal = portalURL(target) else {
                return (.portal, nil, "HTTP \(response.status) redirect to something that is not an http(s) URL: \(shown(location.trimmingSpaces))")
            }
            return (.portal, portal, "redirected to \(portal)")
        }
        if let refresh = metaRefreshTarget(in: body) {
            let target = base?.resolve(refresh) ?? refresh
            guard isCleanURLText(refresh), let portal = portalURL(target) else {
                return (.portal, nil, "HTTP \(response.status) page refreshing to something that is not an http(s) URL: \(shown(refresh))")
            }
            return (.portal, portal, "HTTP \(response.status) page refreshing to \(portal)")
        }
        let what = expected.isEmpty ? "expected 204" : "expected 200 with \"\(expected.prefix(40))\""
        return (.portal, url, "unexpected answer HTTP \(response.status) (\(what))")
    }

    /// A portal's login address as published (`portalUrl`): only an absolute http(s) URL of at
    /// most 2048 bytes without white space or control characters; anything else a server on the
    /// path sends (`javascript:`, a `file:` path, escape sequences) is not passed on.
    static func portalURL(_ target: String) -> String? {
        guard isCleanURLText(target), let url = try? ProbeURL(target) else { return nil }
        return url.string
    }

    /// At most 2048 bytes, no white space, no control characters: what a URL as sent may hold
    /// (checked before resolving, which would percent-encode them and hide the attempt).
    static func isCleanURLText(_ text: String) -> Bool {
        text.utf8.count <= 2048
            && !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || TerminalText.needsEscape($0) })
    }

    /// Untrusted text in an error: control characters escaped, at most 200 characters.
    static func shown(_ text: String) -> String {
        let cut = text.count > 200 ? String(text.prefix(200)) + "…" : text
        return TerminalText.escaped(cut)
    }

    /// The URL of `<meta http-equiv="refresh" content="0; url=…">` in `html`, if any.
    static func metaRefreshTarget(in html: String) -> String? {
        var searchFrom = html.startIndex
        while let meta = html[searchFrom...].firstRange(ofCaseInsensitive: "<meta") {
            guard let end = html[meta.upperBound...].firstIndex(of: ">") else { return nil }
            searchFrom = html.index(after: end)
            let tag = html[meta.upperBound..<end]
            guard tag.firstRange(ofCaseInsensitive: "http-equiv") != nil,
                  tag.firstRange(ofCaseInsensitive: "refresh") != nil,
                  let urlKey = tag.firstRange(ofCaseInsensitive: "url=") else { continue }
            var target = tag[urlKey.upperBound...].trimmingSpaces
            if let first = target.first, first == "'" || first == "\"" { target.removeFirst() }
            if let quote = target.firstIndex(where: { $0 == "'" || $0 == "\"" }) { target = String(target[..<quote]) }
            target = target.trimmingSpaces
            if !target.isEmpty { return target }
        }
        return nil
    }
}
