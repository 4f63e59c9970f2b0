import Foundation
import Testing
@testable import ReachabilityCore

private let checked = Date(timeIntervalSince1970: 1_800_000_000)
private let url = "http://10.77.0.1:8080/generate_204?x=1"

struct VerdictCase: CustomTestStringConvertible, Sendable {
    let name: String
    var expected = ""
    let outcome: ProbeOutcome
    var reachable = true
    let result: Connectivity
    var portalUrl: String?
    var httpStatus: Int?
    var testDescription: String { name }
}

private func response(_ status: Int, _ body: String = "", headers: [(String, String)] = []) -> ProbeOutcome {
    .response(HTTPResponse(status: status, headers: headers.map { .init(name: $0.0, value: $0.1) }, body: Array(body.utf8)))
}

let verdictCases: [VerdictCase] = [
    VerdictCase(name: "204 is full", outcome: response(204), result: .full, httpStatus: 204),
    VerdictCase(name: "empty 200 is full", outcome: response(200), result: .full, httpStatus: 200),
    VerdictCase(name: "200 with only white space is full", outcome: response(200, "\r\n"), result: .full, httpStatus: 200),
    VerdictCase(name: "200 with a page is a portal", outcome: response(200, "<html>Please log in</html>"),
                result: .portal, portalUrl: url, httpStatus: 200),
    VerdictCase(name: "expected body is full", expected: "NetworkManager is online",
                outcome: response(200, "NetworkManager is online\n"), result: .full, httpStatus: 200),
    VerdictCase(name: "expected body as a prefix is full", expected: "online",
                outcome: response(200, "online and more"), result: .full, httpStatus: 200),
    VerdictCase(name: "other body with expected response is a portal", expected: "NetworkManager is online",
                outcome: response(200, "<html>login</html>"), result: .portal, portalUrl: url, httpStatus: 200),
    VerdictCase(name: "204 when a body is expected is a portal", expected: "online",
                outcome: response(204), result: .portal, portalUrl: url, httpStatus: 204),
    VerdictCase(name: "expected body with status 404 is a portal", expected: "online",
                outcome: response(404, "online"), result: .portal, portalUrl: url, httpStatus: 404),
    VerdictCase(name: "302 absolute Location", outcome: response(302, headers: [("Location", "http://portal.test/login?r=1")]),
                result: .portal, portalUrl: "http://portal.test/login?r=1", httpStatus: 302),
    VerdictCase(name: "302 relative Location is resolved", outcome: response(302, headers: [("location", "/login?from=probe")]),
                result: .portal, portalUrl: "http://10.77.0.1:8080/login?from=probe", httpStatus: 302),
    VerdictCase(name: "307 document-relative Location", outcome: response(307, headers: [("Location", "portal.html")]),
                result: .portal, portalUrl: "http://10.77.0.1:8080/portal.html", httpStatus: 307),
    VerdictCase(name: "301 scheme-relative Location", outcome: response(301, headers: [("Location", "//gw.test/a")]),
                result: .portal, portalUrl: "http://gw.test/a", httpStatus: 301),
    VerdictCase(name: "302 without Location", outcome: response(302), result: .portal, portalUrl: nil, httpStatus: 302),
    VerdictCase(name: "511 network authentication required", outcome: response(511, "log in"),
                result: .portal, portalUrl: url, httpStatus: 511),
    VerdictCase(name: "meta refresh page", outcome: response(200, #"<html><head><META http-equiv="refresh" content="0; URL='/Login?Tok=AbC'"></head></html>"#),
                result: .portal, portalUrl: "http://10.77.0.1:8080/Login?Tok=AbC", httpStatus: 200),
    VerdictCase(name: "timeout is limited", outcome: .failure(.init(.timeout, "timed out")), result: .limited),
    VerdictCase(name: "refused is limited", outcome: .failure(.init(.refused, "refused")), result: .limited),
    VerdictCase(name: "reset is limited", outcome: .failure(.init(.reset, "reset")), result: .limited),
    VerdictCase(name: "DNS failure is limited", outcome: .failure(.init(.dnsFailure, "no such host")), result: .limited),
    VerdictCase(name: "no route is limited", outcome: .failure(.init(.unreachable, "no route")), result: .limited),
    VerdictCase(name: "garbage is limited", outcome: .failure(.init(.malformed, "not HTTP")), result: .limited),
    VerdictCase(name: "a URL that cannot be checked is unknown", outcome: .failure(.init(.unsupported, "cannot check")), result: .unknown),
    VerdictCase(name: "a TLS failure is limited", outcome: .failure(.init(.tls, "certificate verify failed")), result: .limited),
    VerdictCase(name: "not reachable is none, whatever came back", outcome: response(204), reachable: false, result: .none),
]

@Suite struct ProbeVerdictTests {
    @Test(arguments: verdictCases)
    func verdict(_ c: VerdictCase) {
        let probe = ProbeVerdict.probe(url: url, expectedResponse: c.expected, outcome: c.outcome,
                                       reachable: c.reachable, rttMs: 3.5, checkedAt: checked)
        #expect(probe.result == c.result)
        #expect(probe.portalUrl == c.portalUrl)
        #expect(probe.httpStatus == c.httpStatus)
        #expect(probe.url == url)
        #expect(probe.checkedAt == checked)
        // Only a full verdict goes without an explanation.
        #expect((probe.error == nil) == (c.result == .full))
        if case .failure(let failure) = c.outcome, c.reachable {
            #expect(probe.error == failure.message)
            #expect(probe.rttMs == nil)
        }
    }

    @Test func metaRefreshVariants() {
        #expect(ProbeVerdict.metaRefreshTarget(in: "<meta http-equiv=refresh content=0;url=/x>") == "/x")
        #expect(ProbeVerdict.metaRefreshTarget(in: #"<meta name="x"><meta content="5;url=http://a/b" http-equiv="Refresh" />"#) == "http://a/b")
        #expect(ProbeVerdict.metaRefreshTarget(in: #"<meta http-equiv="refresh" content="5">"#) == nil)
        #expect(ProbeVerdict.metaRefreshTarget(in: "<meta http-equiv=refresh url=") == nil)
        #expect(ProbeVerdict.metaRefreshTarget(in: "no html at all") == nil)
    }
}

struct URLCase: CustomTestStringConvertible, Sendable {
    let url: String
    let host: String?
    var port = 80
    var target = "/"
    var hostHeader = ""
    var https = false
    var testDescription: String { url }
}

let urlCases: [URLCase] = [
    URLCase(url: "http://10.77.0.1:8080/generate_204", host: "10.77.0.1", port: 8080, target: "/generate_204", hostHeader: "10.77.0.1:8080"),
    URLCase(url: "http://example.test", host: "example.test", hostHeader: "example.test"),
    URLCase(url: "HTTP://Example.test:80/a/b?c=d&e=f#frag", host: "Example.test", target: "/a/b?c=d&e=f", hostHeader: "Example.test"),
    URLCase(url: "http://[fd00::1]:8080/check", host: "fd00::1", port: 8080, target: "/check", hostHeader: "[fd00::1]:8080"),
    URLCase(url: "https://example.test/", host: "example.test", port: 443, hostHeader: "example.test", https: true),
    URLCase(url: "  http://a.test/x  ", host: "a.test", target: "/x", hostHeader: "a.test"),
    URLCase(url: "ftp://example.test/", host: nil),
    URLCase(url: "example.test/check", host: nil),
    URLCase(url: "http:///path", host: nil),
    URLCase(url: "http://a.test:0/", host: nil),
    URLCase(url: "", host: nil),
]

@Suite struct ProbeURLTests {
    @Test(arguments: urlCases)
    func parse(_ c: URLCase) {
        let parsed = try? ProbeURL(c.url)
        #expect(parsed?.host == c.host)
        guard let parsed else { return }
        #expect(parsed.port == c.port)
        #expect(parsed.requestTarget == c.target)
        #expect(parsed.hostHeader == c.hostHeader)
        #expect(parsed.isHTTPS == c.https)
    }

    @Test func errorNamesTheURL() {
        #expect(throws: ProbeURLError(url: "ftp://x/", problem: "scheme ftp is not http or https")) { try ProbeURL("ftp://x/") }
    }

    @Test func request() throws {
        let request = String(decoding: try ProbeURL("http://10.1.0.1:8080/c?x=1").requestBytes, as: UTF8.self)
        #expect(request == "GET /c?x=1 HTTP/1.1\r\nHost: 10.1.0.1:8080\r\nConnection: close\r\nCache-Control: no-cache\r\nUser-Agent: reachd/0.1\r\n\r\n")
    }
}

@Suite struct ProbeSummaryTests {
    @Test func lines() {
        let at = Date(timeIntervalSince1970: 0)
        #expect(Probe(url: "http://a/", result: .full, httpStatus: 204, rttMs: 18.24, checkedAt: at).summary
                == "internet: full · HTTP 204 · 18.2 ms · http://a/")
        #expect(Probe(url: "http://a/", result: .portal, httpStatus: 302, rttMs: 3, portalUrl: "http://p/login",
                      error: "redirected to http://p/login", checkedAt: at).summary
                == "internet: portal · HTTP 302 · 3.0 ms · log in at http://p/login · http://a/")
        #expect(Probe(url: "http://a/", result: .limited, error: "timed out", checkedAt: at).summary
                == "internet: limited · timed out · http://a/")
        #expect(ProbeVerdict.notReachable(url: "http://a/", at: at).summary
                == "internet: none · not reachable: no usable default route · http://a/")
    }
}
