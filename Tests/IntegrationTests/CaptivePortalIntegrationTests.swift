import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension ConnectivitySystemTests {
/// The network says it has a portal: a router advertisement from the uplink namespace announces
/// an RFC 8910 captive-portal API, served over https with a certificate of the test's own CA;
/// reachd asks it, and apps see the portal with its login page in one event.
@Suite struct CaptivePortalIntegrationTests {
    static func config(caFile: String, textfile: String, url: String = "http://10.77.0.1:8080/generate_204") -> String {
        """
        [Connectivity]
        URL=\(url)
        Interval=60
        Timeout=2
        CAFile=\(caFile)
        [Cellular]
        ModemManager=no
        [Limits]
        ProbeMinInterval=100ms
        [Metrics]
        TextfileDirectory=\(textfile)
        """
    }

    private static func events(_ monitor: Child) -> [ReachabilityEvent] {
        monitor.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
    }

    @Test(.needsRoot()) func theAnnouncedAPIDecidesAndAppsSeeIt() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink)
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let probeServer = try ProbeServer(in: uplink, mode: .noContent)
        let api = try ProbeServer(in: uplink, port: 8443, mode: .json(
            #"{"captive": true, "user-portal-url": "https://10.77.0.1/login", "venue-info-url": "https://10.77.0.1/venue", "seconds-remaining": 900}"#),
            certificate: try authority.serverCertificate(ipAddress: veth.gatewayAddress))
        defer { probeServer.stop(); api.stop() }
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        let daemon = try DaemonUnderTest(namespace: host, directory: directory,
                                         config: Self.config(caFile: authority.certificate, textfile: directory))
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        // The link-local address settled (a new address is a new path, checked again) before counting checks.
        let linkLocal = try #require(try veth.settledLinkLocal())
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status", "--json"]).stdout.contains(linkLocal)) == true })
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        let checksBefore = probeServer.requests.count
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGTERM); monitor.wait() }
        #expect(waitUntil(timeout: 10) { !Self.events(monitor).isEmpty })

        // The portal captures the network: the ordinary check is intercepted (the evidence), and
        // the API describes the portal.
        try probeServer.set(.redirect("http://10.77.0.1:8080/intercepted"))
        try RouterAdvertiser.send(from: uplink, interface: veth.outer, options: [
            RouterAdvertiser.captivePortal("https://10.77.0.1:8443/capport"),
            RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600),
            RouterAdvertiser.dnssl(["corp.example"], lifetime: 600),
        ])
        #expect(waitUntil(timeout: 20) { Self.events(monitor).contains { $0.current.connectivity == .portal } }, "\(monitor.lines)")
        // The event that says portal says where to log in: no second event needed.
        let portal = try #require(Self.events(monitor).first { $0.current.connectivity == .portal })
        let probe = try #require(portal.current.probe)
        #expect(probe.portalUrl == "https://10.77.0.1/login" && probe.venueInfoUrl == "https://10.77.0.1/venue")
        #expect(probe.source == "ra" && probe.url == "https://10.77.0.1:8443/capport" && probe.secondsRemaining == 900)
        #expect(portal.reason.code == .probeResult && portal.changes.contains("connectivity"))
        #expect(portal.current.primary?.captivePortalApi == "https://10.77.0.1:8443/capport")
        #expect(portal.current.primary?.dns == ["2001:db8::53"] && portal.current.primary?.searchDomains == ["corp.example"])
        #expect(Self.events(monitor).contains { $0.reason.code == .routerAdvertisement && $0.reason.interface == veth.inner })
        // The ordinary check ran and was intercepted; the API's login page is the one shown.
        #expect(probeServer.requests.count > checksBefore)
        #expect(api.requests.first?.contains("application/captive+json") == true)

        let human = try daemon.reachctl(["status"]).stdout
        // IPv4 alone has a path here: no family named beside the verdict (IPv6 has none to judge).
        #expect(human.contains("internet: portal · log in at https://10.77.0.1/login · 1"), "\(human)")
        #expect(human.contains(" min left"), "\(human)")
        let verbose = try daemon.reachctl(["status", "--verbose"]).stdout
        #expect(verbose.contains("eth0 announces: DNS 2001:db8::53 · search corp.example · captive-portal API https://10.77.0.1:8443/capport"),
                "\(verbose)")
        let json = try WireJSON.decoder().decode(Status.self, from: Data(try daemon.reachctl(["status", "--json"]).stdout.utf8))
        #expect(json.probe?.portalUrl == "https://10.77.0.1/login" && json.probe?.source == "ra")

        // Logged in: the API says so, and the ordinary check confirms full.
        try probeServer.set(.noContent)
        try api.set(.json(#"{"captive": false, "seconds-remaining": 3600}"#))
        #expect(waitUntil(timeout: 30) { Self.events(monitor).last?.current.connectivity == .full }, "\(monitor.lines.suffix(2))")
        let full = try #require(Self.events(monitor).last?.current.probe)
        #expect(full.result == .full && full.httpStatus == 204 && full.source == "ra" && full.secondsRemaining == 3600)

        // The metrics count the API's answers apart from the HTTP checks.
        let prom = directory + "/reachd.prom"
        #expect(waitUntil(timeout: 10) {
            let samples = metricSamples((try? String(contentsOfFile: prom, encoding: .utf8)) ?? "")
            return (Int(samples[#"reachd_probes_total{method="api",result="portal"}"#] ?? "") ?? 0) >= 1
                && (Int(samples[#"reachd_probes_total{method="api",result="full"}"#] ?? "") ?? 0) >= 1
                && (Int(samples[#"reachd_probes_total{method="http",result="full"}"#] ?? "") ?? 0) >= 2
        }, "\((try? String(contentsOfFile: prom, encoding: .utf8)) ?? "")")

        // The network withdraws the API: the check goes back to the ordinary one alone.
        try RouterAdvertiser.send(from: uplink, interface: veth.outer, options: [RouterAdvertiser.captivePortal(RouterOption.unrestricted)])
        #expect(waitUntil(timeout: 20) { Self.events(monitor).last?.current.primary?.captivePortalApi == nil })
        // The verdict stays full (no event: only the verdict and the portal URL make one);
        // `reachctl probe` shows the check that speaks now.
        #expect(waitUntil(timeout: 20) {
            let text = (try? daemon.reachctl(["probe", "--json"]).stdout) ?? ""
            let probe = try? WireJSON.decoder().decode(Probe.self, from: Data(text.utf8))
            return probe?.result == .full && probe?.source == nil && probe?.url == "http://10.77.0.1:8080/generate_204"
        })
        #expect(Self.events(monitor).last?.current.connectivity == .full)
    }

    /// An https check URL whose certificate nobody vouches for: limited, the TLS error named;
    /// with the right CA, full.
    @Test(.needsRoot()) func anHTTPSCheckWithAWrongCertificateIsLimited() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink)
        let authority = try TestCertificateAuthority(), stranger = try TestCertificateAuthority()
        defer { authority.remove(); stranger.remove() }
        let server = try ProbeServer(in: uplink, port: 8443, mode: .noContent,
                                     certificate: try authority.serverCertificate(ipAddress: veth.gatewayAddress))
        defer { server.stop() }
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        let url = "https://10.77.0.1:8443/generate_204"
        let daemon = try DaemonUnderTest(namespace: host, directory: directory,
                                         config: Self.config(caFile: stranger.certificate, textfile: directory, url: url))
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: limited")) == true })
        let probe = try WireJSON.decoder().decode(Probe.self, from: Data(try daemon.reachctl(["probe", "--json"]).stdout.utf8))
        #expect(probe.result == .limited && probe.url == url)
        #expect(probe.error?.contains("certificate verify failed: unable to get local issuer certificate") == true, "\(probe.error ?? "")")

        try daemon.writeConfig(Self.config(caFile: authority.certificate, textfile: directory, url: url))
        daemon.reload()
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        #expect(server.requests.count >= 1)
    }
}
}
