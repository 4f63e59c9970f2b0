import Foundation
import Testing
@testable import ReachabilityCore

/// The ordinary check is the evidence: anyone on the link can announce an API that says
/// `captive: true`; when the ordinary check got its expected answer, the verdict is `full`.
@Suite struct CaptivePortalEvidenceTests {
    private static let at = Date(timeIntervalSince1970: 1_800_000_000)
    private static let api = "https://10.77.0.1:8443/capport"
    private static let check = "http://10.77.0.1:8080/generate_204"

    private static func checked(_ result: Connectivity) -> Probe {
        switch result {
        case .full: return Probe(url: check, result: .full, httpStatus: 204, checkedAt: at)
        case .portal: return Probe(url: check, result: .portal, httpStatus: 302, portalUrl: "http://10.77.0.1/redirected",
                                   error: "redirected to http://10.77.0.1/redirected", checkedAt: at)
        case .limited: return Probe(url: check, result: .limited, error: "timed out", checkedAt: at)
        case .unknown, .none: return Probe(url: check, result: result, checkedAt: at)
        }
    }

    private static let captive = CaptivePortalAPI.State(captive: true, userPortalUrl: "https://attacker.example/login")
    private static let free = CaptivePortalAPI.State(captive: false, secondsRemaining: 600)

    @Test(arguments: [
        // (what the API said, the ordinary check, the verdict, its portalUrl, a disagreement noted)
        (Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>.success(captive), Connectivity.full, Connectivity.full, nil as String?, true),
        (.success(captive), .portal, .portal, "https://attacker.example/login", false),
        (.success(captive), .limited, .portal, "https://attacker.example/login", false),
        (.success(free), .full, .full, nil, false),
        (.success(free), .portal, .portal, "http://10.77.0.1/redirected", false),
        (.failure(CaptivePortalAPI.Failure("answer is not JSON")), .full, .full, nil, false),
    ] as [(Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, Connectivity, Connectivity, String?, Bool)])
    func theOrdinaryCheckDecides(api said: Result<CaptivePortalAPI.State, CaptivePortalAPI.Failure>, check: Connectivity,
                                 verdict: Connectivity, portalUrl: String?, disagrees: Bool) {
        let (probe, disagreement) = CaptivePortalAPI.verdict(said, api: Self.api, apiRttMs: 3, checked: Self.checked(check),
                                                             checkedAt: Self.at)
        #expect(probe.result == verdict)
        #expect(probe.portalUrl == portalUrl)
        #expect((disagreement != nil) == disagrees)
        if disagrees {
            // The disagreement is in the probe's error, and the check's own URL is the probe's.
            #expect(probe.error?.hasPrefix("captive-portal API \(Self.api) says captive") == true, "\(probe.error ?? "")")
            #expect(probe.url == Self.check && probe.httpStatus == 204)
        }
    }

    /// The API's URLs go through the one normalisation of portal URLs (`ProbeVerdict.portalURL`):
    /// what a redirect's Location would not pass does not pass here either.
    @Test(arguments: [
        ("https://Portal.Example/login", ProbeVerdict.portalURL("https://Portal.Example/login")),
        ("https://portal.example/a b", nil),
        ("https://portal.example/\u{1b}[31m", nil),
        ("http://portal.example/login", nil),
        ("javascript:alert(1)", nil),
        ("https://portal.example/" + String(repeating: "a", count: 2100), nil),
    ] as [(String, String?)])
    func theAPIsURLsAreNormalisedAsRedirectsAre(url: String, expected: String?) throws {
        let json = #"{"captive": true, "user-portal-url": "\#(url.replacingOccurrences(of: "\u{1b}", with: "\\u001b"))", "venue-info-url": "\#(url.replacingOccurrences(of: "\u{1b}", with: "\\u001b"))"}"#
        let state = try CaptivePortalAPI.state(json: Array(json.utf8)).get()
        #expect(state.userPortalUrl == expected && state.venueInfoUrl == expected)
    }
}
