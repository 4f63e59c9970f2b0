import Foundation
import Testing
@testable import ReachabilityCore

@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("plain text · ünïcode", "plain text · ünïcode"),
        ("\u{1B}]0;pwned\u{07}", "\\x1b]0;pwned\\x07"),
        ("a\u{1B}[2Jb", "a\\x1b[2Jb"),
        ("line\nnext\r\t", "line\\x0anext\\x0d\\x09"),
        ("del\u{7F}", "del\\x7f"),
        ("c1 \u{9B}31m", "c1 \\u{9b}31m"),
        ("bidi \u{202E}txt.exe", "bidi \\u{202e}txt.exe"),
        ("\u{0}", "\\x00"),
    ])
    func escapes(_ input: String, _ expected: String) {
        #expect(TerminalText.escaped(input) == expected)
        #expect(!TerminalText.escaped(input).unicodeScalars.contains(where: TerminalText.needsEscape))
    }
}

@Suite struct PortalURLTests {
    private static let url = "http://10.77.0.1:8080/generate_204"

    private func verdict(_ status: Int, _ headers: [(String, String)], body: String = "") -> Probe {
        ProbeVerdict.probe(url: Self.url, expectedResponse: "",
                           outcome: .response(HTTPResponse(status: status, headers: headers.map { .init(name: $0.0, value: $0.1) }, body: Array(body.utf8))),
                           rttMs: 1, checkedAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// Only an http(s) URL is published as `portalUrl`; what a hostile portal sends instead is
    /// named in the error, escaped.
    @Test func onlyHTTPURLsArePublished() {
        #expect(verdict(302, [("Location", "https://portal.example/login?a=1")]).portalUrl == "https://portal.example/login?a=1")
        #expect(verdict(302, [("Location", "/login")]).portalUrl == "http://10.77.0.1:8080/login")
        for location in ["javascript:alert(1)", "file:///etc/passwd", "http://portal.example/\u{1B}]0;pwned\u{07}",
                         "http://portal.example/a b", "http://portal.example/" + String(repeating: "a", count: 3000), "data:text/html,x"] {
            let probe = verdict(302, [("Location", location)])
            #expect(probe.result == .portal && probe.portalUrl == nil, "\(location.prefix(40)) → \(String(describing: probe.portalUrl))")
            #expect(probe.error?.contains("not an http(s) URL") == true)
            #expect(probe.error.map { !$0.unicodeScalars.contains(where: TerminalText.needsEscape) } == true)
        }
        let refresh = verdict(200, [], body: "<meta http-equiv=\"refresh\" content=\"0; url=http://x/\u{1B}[2J\">")
        #expect(refresh.result == .portal && refresh.portalUrl == nil && refresh.error?.contains("\\x1b[2J") == true, "\(refresh)")
    }

    @Test func failureTextsAreEscaped() {
        let probe = ProbeVerdict.probe(url: Self.url, expectedResponse: "",
                                       outcome: .failure(ProbeFailure(.malformed, "10.77.0.1:8080: bad status line 'HTTP/1.1 2\u{1B}[31m00'")),
                                       rttMs: nil, checkedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(probe.error == "10.77.0.1:8080: bad status line 'HTTP/1.1 2\\x1b[31m00'")
    }
}

@Suite struct LogRateLimiterTests {
    @Test func burstThenOnePerIntervalWithTheSuppressedCount() {
        var limiter = LogRateLimiter(burst: 3, interval: 1)
        let first = (0..<10).map { _ in limiter.admit(now: 100).allowed }
        #expect(first == [true, true, true] + Array(repeating: false, count: 7))
        #expect(limiter.admit(now: 100.5).allowed == false)
        let next = limiter.admit(now: 101.01)
        #expect(next.allowed && next.suppressedBefore == 8)
        #expect(limiter.admit(now: 101.02).allowed == false)
        // A quiet spell refills the burst, never beyond it.
        #expect((0..<5).map { _ in limiter.admit(now: 200).allowed } == [true, true, true, false, false])
    }
}
