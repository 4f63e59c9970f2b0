import Foundation
import ReachabilityCore
import ReachabilityLinux
import Testing
import TestSupport

/// The lab with a captive-portal API on https://10.77.0.1:8443/capport (a certificate of the
/// test's own CA, which `CAFile=` names), beside the ordinary probe server on :8080.
final class CaptivePortalLab: @unchecked Sendable {
    let lab: ProbeLab
    let authority: TestCertificateAuthority
    let api: ProbeServer

    init(api mode: ProbeServer.Mode, probe: ProbeServer.Mode = .noContent, selfSigned: Bool = false) throws {
        lab = try ProbeLab(mode: probe)
        authority = try TestCertificateAuthority()
        api = try ProbeServer(in: lab.uplink, port: 8443, mode: mode,
                              certificate: try authority.serverCertificate(ipAddress: lab.veth.gatewayAddress, selfSigned: selfSigned))
    }

    var apiURL: String { "https://\(lab.veth.gatewayAddress):8443/capport" }

    /// The lab's status, its interface announcing the API.
    var status: Status {
        var status = labStatus(lab)
        status.primary?.captivePortalApi = apiURL
        status.interfaces = [status.primary].compactMap { $0 }
        return status
    }

    var configuration: ConnectivityChecker.Configuration {
        var configuration = checkerConfiguration(lab, interval: 120, timeout: 2)
        configuration.caFile = authority.certificate
        return configuration
    }

    func destroy() {
        api.stop()
        authority.remove()
        lab.destroy()
    }
}

extension ConnectivitySystemTests {
@Suite struct CaptivePortalAPICheckerTests {
    /// `captive: true` while the portal intercepts the ordinary check: a portal with the API's
    /// login page (not the redirect's); the request asked for captive+json. Logged in (`captive:
    /// false`): the ordinary check confirms full, and the session's time left rides along.
    @Test(.needsRoot()) func theAPIDescribesThePortalAndTheCheckConfirmsTheRest() throws {
        let portal = #"{"captive": true, "user-portal-url": "https://10.77.0.1/login", "venue-info-url": "https://10.77.0.1/venue", "can-extend-session": false}"#
        let lab = try CaptivePortalLab(api: .json(portal), probe: .redirect("http://10.77.0.1:8080/intercepted"))
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: lab.status)
        let checks = Collector<String>()
        let checker = ConnectivityChecker(configuration: lab.configuration, target: target, networkNamespace: lab.lab.host.name)
        checker.observeChecks { method, probe in checks.append("\(method.rawValue) \(probe.result.rawValue)") }
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results.contains(.portal) }, "\(target.probes)")
        let first = try #require(target.probes.first { $0?.result == .portal } ?? nil)
        #expect(first.portalUrl == "https://10.77.0.1/login" && first.venueInfoUrl == "https://10.77.0.1/venue")
        #expect(first.canExtendSession == false && first.source == "ra" && first.url == lab.apiURL && first.error == nil)
        #expect(lab.api.requests.first?.hasSuffix("application/captive+json") == true, "\(lab.api.requests)")
        // The ordinary check is the evidence: it ran, and was intercepted.
        #expect(lab.lab.server.requests.count == 1)
        #expect(waitUntil(timeout: 5) { checks.values.prefix(2) == ["api portal", "http portal"] }, "\(checks.values)")

        try lab.lab.server.set(.noContent)
        try lab.api.set(.json(#"{"captive": false, "seconds-remaining": 3600, "bytes-remaining": 1000000}"#))
        #expect(waitUntil(timeout: 30) { target.results.last == .full })
        let full = try #require(target.probes.last ?? nil)
        #expect(full.secondsRemaining == 3600 && full.bytesRemaining == 1_000_000 && full.source == "ra" && full.httpStatus == 204)
        #expect(full.url == lab.lab.baseURL + "/generate_204")
        #expect(waitUntil(timeout: 5) { checks.values.suffix(2) == ["api full", "http full"] }, "\(checks.values)")
    }

    /// `seconds-remaining: 3`: asked again before the three seconds are up, not after the
    /// two-minute interval; when the session is over the API says captive, and that is a portal.
    @Test(.needsRoot()) func aSessionRunningOutIsCheckedAgainBeforeItEnds() throws {
        let lab = try CaptivePortalLab(api: .json(#"{"captive": false, "seconds-remaining": 3}"#))
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: lab.status)
        let checker = ConnectivityChecker(configuration: lab.configuration, target: target, networkNamespace: lab.lab.host.name)
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results.contains(.full) })
        #expect(target.probes.last??.secondsRemaining == 3)
        try lab.lab.server.set(.redirect("http://10.77.0.1:8080/intercepted"))
        try lab.api.set(.json(#"{"captive": true, "user-portal-url": "https://10.77.0.1/again"}"#))
        #expect(waitUntil(timeout: 20) { target.results.last == .portal }, "\(target.probes)")
        #expect(target.probes.last??.portalUrl == "https://10.77.0.1/again")
        #expect(lab.api.requests.count >= 2)
    }

    /// An API that does not answer as RFC 8908 says is passed over: the ordinary check decides,
    /// and the probe's error says why the API was not used.
    @Test(.needsRoot(), arguments: [
        (ProbeServer.Mode.body("<html>log in</html>"), "not JSON"),
        (.json(#"["captive"]"#), "not a JSON object"),
        (.json(#"{"captive": "no"}"#), "\"captive\" is not true or false"),
        (.json(#"{"user-portal-url": "https://10.77.0.1/"}"#), "no \"captive\""),
        (.big(10 << 20), "longer than 16384 bytes"),
        (.trickle, "timed out"),
        (.hang, "timed out"),
        (.redirect("https://10.77.0.1/elsewhere"), "HTTP 302"),
    ])
    func aBrokenAPIFallsBackToTheCheck(mode: ProbeServer.Mode, reason: String) throws {
        let lab = try CaptivePortalLab(api: mode)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: lab.status)
        let lines = Collector<String>()
        let checker = ConnectivityChecker(configuration: lab.configuration, target: target, networkNamespace: lab.lab.host.name,
                                          log: LogSink(threshold: .info) { level, message in lines.append("\(level): \(message)") })
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 20) { !target.probes.isEmpty })
        let probe = try #require(target.probes.first ?? nil)
        #expect(probe.result == .full && probe.source == nil && probe.httpStatus == 204)
        #expect(probe.error?.hasPrefix("captive-portal API \(lab.apiURL) not used: ") == true, "\(probe.error ?? "")")
        #expect(probe.error?.contains(reason) == true, "\(probe.error ?? "")")
        #expect(lab.lab.server.requests.count == 1)
        // And the log says so, once per check.
        #expect(waitUntil(timeout: 5) { !lines.values.isEmpty })
        #expect(lines.values.count == 1, "\(lines.values)")
        #expect(lines.values.first?.hasPrefix("notice: captive-portal API \(lab.apiURL) on eth0 not used: ") == true, "\(lines.values)")
        #expect(lines.values.first?.contains(reason) == true, "\(lines.values)")
    }

    /// A certificate the CA did not sign: the API is not believed (the TLS error named), and
    /// the ordinary check, which the portal intercepts, says portal.
    @Test(.needsRoot()) func anAPIWithAWrongCertificateIsNotBelieved() throws {
        let lab = try CaptivePortalLab(api: .json(#"{"captive": false}"#), probe: .redirect("http://10.77.0.1:8080/login"),
                                       selfSigned: true)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: lab.status)
        let checker = ConnectivityChecker(configuration: lab.configuration, target: target, networkNamespace: lab.lab.host.name)
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 20) { !target.probes.isEmpty })
        let probe = try #require(target.probes.first ?? nil)
        #expect(probe.result == .portal && probe.portalUrl == "http://10.77.0.1:8080/login" && probe.source == nil)
        #expect(probe.error?.contains("certificate verify failed: self-signed certificate") == true, "\(probe.error ?? "")")
        #expect(lab.api.requests.isEmpty)
    }
}
}
