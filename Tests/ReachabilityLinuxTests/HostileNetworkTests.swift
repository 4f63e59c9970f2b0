import Foundation
import ReachabilityCore
@testable import ReachabilityLinux
import Testing
import TestSupport

/// The machine under test (eth0 in `host`) on a link where anyone sends router advertisements
/// (raw ones from `uplink`, RouterAdvertiser) and runs a captive-portal API with a valid
/// certificate (the test's own CA, which `CAFile=` names): the monitor and the checker as reachd
/// runs them, the check URL's server on :8080 and the API on :8443 of 10.77.0.1.
final class HostileLab: @unchecked Sendable {
    let host: TestNamespace, uplink: TestNamespace
    let veth: VethUplink
    let sysfs: FakeSysfs
    let authority: TestCertificateAuthority
    let check: ProbeServer, api: ProbeServer
    let monitorLines = Collector<String>(), checkerLines = Collector<String>()
    let monitor: ReachabilityMonitor
    let checker: ConnectivityChecker
    let configuration: ConnectivityChecker.Configuration
    let recorder: EventRecorder

    /// - Parameter probeMinInterval: `ProbeMinInterval=`: 0 gives every `Probe()` a check of its own.
    init(api mode: ProbeServer.Mode, probeMinInterval: Double = 0) throws {
        host = try TestNamespace(tag: "h")
        uplink = try TestNamespace(tag: "u")
        veth = try VethUplink(host: host, uplink: uplink)
        sysfs = try FakeSysfs()
        authority = try TestCertificateAuthority()
        check = try ProbeServer(in: uplink, mode: .noContent)
        api = try ProbeServer(in: uplink, port: 8443, mode: mode,
                              certificate: try authority.serverCertificate(ipAddress: veth.gatewayAddress))
        let monitorLines = self.monitorLines, checkerLines = self.checkerLines
        monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs),
                                      log: LogSink(threshold: .info) { level, message in monitorLines.append("\(level): \(message)") })
        var configuration = ConnectivityChecker.Configuration()
        configuration.url = "http://\(veth.gatewayAddress):8080/generate_204"
        configuration.intervalSeconds = 120
        configuration.timeoutSeconds = 2
        configuration.initialBackoff = 0.5
        configuration.caFile = authority.certificate
        // By default every `Probe()` a check of its own (the network's floor still holds).
        configuration.probeMinInterval = probeMinInterval
        self.configuration = configuration
        checker = ConnectivityChecker(configuration: configuration, target: monitor, networkNamespace: host.name,
                                      log: LogSink(threshold: .info) { level, message in checkerLines.append("\(level): \(message)") })
        recorder = EventRecorder(monitor)
        try monitor.start()
        checker.attach(to: monitor)
    }

    /// Waits until eth0 is online with its link-local address and the internet checked full.
    func settle() throws {
        #expect(waitUntil(timeout: 10) { self.monitor.status.status == .ethernet })
        let linkLocal = try #require(try veth.settledLinkLocal())
        #expect(waitUntil(timeout: 10) { self.monitor.status.primary?.addresses.contains(linkLocal) == true })
        #expect(waitUntil(timeout: 15) { self.monitor.status.connectivity == .full })
    }

    func uri(_ name: String) -> String { "https://\(veth.gatewayAddress):8443/\(name)" }

    /// Sends `count` advertisements, `perSecond` a second, cycling through `cycle`.
    func flood(_ cycle: [[[UInt8]]], count: Int, perSecond: Double, newDNSServer: Bool = false) throws {
        try RouterAdvertiser.flood(from: uplink, interface: veth.outer, cycle: cycle, count: count, perSecond: perSecond,
                                   newDNSServer: newDNSServer)
    }

    /// `Probe()`: a check now (or when the floor allows), its verdict.
    func probe() -> ConnectivityChecker.Reply? {
        let answer = Collector<ConnectivityChecker.Reply>()
        checker.probeNow { answer.append($0) }
        _ = waitUntil(timeout: 15) { !answer.values.isEmpty }
        return answer.values.first
    }

    func send(_ options: [UInt8]...) throws {
        try RouterAdvertiser.send(from: uplink, interface: veth.outer, options: options)
    }

    func destroy() {
        checker.stop()
        monitor.stop()
        api.stop()
        check.stop()
        authority.remove()
        host.destroy()
        uplink.destroy()
    }
}

extension ConnectivitySystemTests {
/// The attacks of a host on the link (docs/captive-portal.md, "What the network can make reachd
/// do"): each bounded in counts — events, requests the servers saw, TLS contexts, log lines —
/// against the seconds the attack lasted (as the sender measured them, or until a marker).
@Suite struct HostileNetworkTests {
    /// At most this many per `floor` seconds over `seconds`, and one more at each end.
    private func bound(_ seconds: Double, per floor: Double) -> Int { Int(seconds / floor) + 2 }

    /// Two URIs alternating a hundred times a second: the API is asked at most once every 2 s
    /// (not per advertisement), the URL= server as rarely, one TLS context serves every check,
    /// and no verdict is `limited` (a full check pool is no verdict) on a network that answers 204.
    @Test(.needsRoot()) func alternatingURIsAskTheAPIAtTheFloor() throws {
        let lab = try HostileLab(api: .json(#"{"captive": false}"#))
        defer { lab.destroy() }
        try lab.settle()
        let checksBefore = lab.check.requests.count, eventsBefore = lab.recorder.events.count
        let started = Date()
        try lab.flood([[RouterAdvertiser.captivePortal(lab.uri("a"))], [RouterAdvertiser.captivePortal(lab.uri("b"))]],
                      count: 300, perSecond: 100)
        // The marker: the last URI (the 300th: "b") checked, the API's word in the verdict.
        #expect(waitUntil(timeout: 20) {
            let status = lab.monitor.status
            return status.primary?.captivePortalApi == lab.uri("b") && status.probe?.source == "ra"
                && status.probe?.url == lab.check.baseURL(lab.veth)
                && lab.recorder.events.last?.current.primary?.captivePortalApi == lab.uri("b")
        }, "\(String(describing: lab.monitor.status.probe))")
        let seconds = Date().timeIntervalSince(started)
        let apiRequests = lab.api.requests.count, checks = lab.check.requests.count - checksBefore
        #expect(apiRequests <= bound(seconds, per: 2), "\(apiRequests) API requests in \(seconds) s")
        #expect(checks <= bound(seconds, per: 2), "\(checks) checks of URL= in \(seconds) s")
        #expect(lab.checker.tlsContextsBuilt == 1)
        let events = Array(lab.recorder.events.dropFirst(eventsBefore))
        #expect(!events.contains { $0.current.connectivity == .limited }, "\(events.map { $0.current.probe?.error ?? "" })")
        #expect(events.filter { $0.reason.code == .routerAdvertisement }.count <= bound(seconds, per: 1))
        #expect(lab.recorder.duplicates.isEmpty,
                "\(lab.recorder.events.map { "\($0.sequence) \($0.reason.code) \($0.previous?.connectivity.rawValue ?? "-")>\($0.current.connectivity.rawValue) \($0.changes)" })")
    }

    /// `Probe()` at once after a router announced an API whose server never answers: the answer
    /// comes from the check that asked that API (timed out, so not used), never the verdict from
    /// before the announcement that `ProbeMinInterval=` would otherwise repeat.
    @Test(.needsRoot()) func aProbeRightAfterANewAPIAsksIt() throws {
        let lab = try HostileLab(api: .hang, probeMinInterval: 60)
        defer { lab.destroy() }
        try lab.settle()
        try lab.send(RouterAdvertiser.captivePortal(lab.uri("never")))
        #expect(waitUntil(timeout: 10) { lab.monitor.status.primary?.captivePortalApi == lab.uri("never") })
        guard case .probe(let probe)? = lab.probe() else { Issue.record("no answer to Probe()"); return }
        #expect(probe.error?.contains("captive-portal API ") == true && probe.error?.contains(" not used: ") == true, "\(probe)")
        #expect(lab.api.requests.count >= 1)
    }

    /// Every check of a configuration shares one TLS context (the CA store is read once); a
    /// reload reads it again.
    @Test(.needsRoot()) func oneTLSContextPerConfiguration() throws {
        let lab = try HostileLab(api: .json(#"{"captive": false}"#))
        defer { lab.destroy() }
        try lab.settle()
        try lab.send(RouterAdvertiser.captivePortal(lab.uri("capport")))
        #expect(waitUntil(timeout: 15) { lab.monitor.status.probe?.source == "ra" })
        for _ in 0..<3 {
            guard case .probe(let probe)? = lab.probe() else { Issue.record("no verdict"); return }
            #expect(probe.source == "ra" && probe.result == .full)
        }
        #expect(lab.api.requests.count >= 4)
        #expect(lab.checker.tlsContextsBuilt == 1)
        lab.checker.reconfigure(lab.configuration)
        guard case .probe(let probe)? = lab.probe() else { Issue.record("no verdict"); return }
        #expect(probe.source == "ra")
        #expect(lab.checker.tlsContextsBuilt == 2)
    }

    /// A thousand advertisements, each with a new DNS server: about one event a second, not one
    /// per advertisement; a link change is not held back and carries the newest servers.
    @Test(.needsRoot()) func newDNSServersInEveryAdvertisementAreMerged() throws {
        let lab = try HostileLab(api: .json(#"{"captive": false}"#))
        defer { lab.destroy() }
        try lab.settle()
        let eventsBefore = lab.recorder.events.count
        let started = Date()
        try lab.flood([[]], count: 1000, perSecond: 500, newDNSServer: true)
        // The marker: an address, which is never held back; its event has the last server (the 1,000th).
        try lab.host.ip("addr add 10.77.0.9/24 dev eth0")
        #expect(waitUntil(timeout: 10) { lab.recorder.events.last?.current.primary?.addresses.contains("10.77.0.9/24") == true })
        let seconds = Date().timeIntervalSince(started)
        let events = Array(lab.recorder.events.dropFirst(eventsBefore))
        let marker = try #require(events.first { $0.current.primary?.addresses.contains("10.77.0.9/24") == true })
        #expect(marker.current.primary?.dns.contains("2001:db8:ffff::3e8") == true, "\(marker.current.primary?.dns ?? [])")
        let announced = events.filter { $0.reason.code == .routerAdvertisement }
        #expect(announced.count <= bound(seconds, per: 1), "\(announced.count) events in \(seconds) s")
        #expect(lab.recorder.duplicates.isEmpty)
        // The kept servers stay bounded.
        #expect((lab.monitor.status.primary?.dns.count ?? 0) <= RouterOptionParser.maxServers)
    }

    /// An API that answers junk, its URI alternating twenty times a second: the checks stay at
    /// the floor, and the notices about the API are rate-limited like the option rejects.
    @Test(.needsRoot()) func aJunkAPIAtTheRARateIsLoggedWithinTheLimit() throws {
        let lab = try HostileLab(api: .body("<html>junk</html>"))
        defer { lab.destroy() }
        try lab.settle()
        let checksBefore = lab.check.requests.count
        let started = Date()
        try lab.flood([[RouterAdvertiser.captivePortal(lab.uri("a"))], [RouterAdvertiser.captivePortal(lab.uri("b"))]],
                      count: 100, perSecond: 20)
        #expect(waitUntil(timeout: 20) {
            let status = lab.monitor.status
            return status.primary?.captivePortalApi == lab.uri("b")
                && status.probe?.error?.hasPrefix("captive-portal API \(lab.uri("b")) not used") == true
        }, "\(String(describing: lab.monitor.status.probe))")
        let seconds = Date().timeIntervalSince(started)
        let checks = lab.check.requests.count - checksBefore
        #expect(checks <= bound(seconds, per: 2), "\(checks) checks of URL= in \(seconds) s")
        #expect(lab.api.requests.count <= bound(seconds, per: 2))
        let notices = lab.checkerLines.values.filter { $0.hasPrefix("notice: ") }
        let notUsed = notices.filter { $0.hasPrefix("notice: captive-portal API ") && $0.contains(" not used: ") }
        #expect(!notUsed.isEmpty && notUsed.count <= 10, "\(notices)")
        #expect(notices.count == notUsed.count, "\(notices)")
        #expect(lab.monitor.status.connectivity == .full)
    }

    /// One spoofed advertisement pointing at an API that says `captive: true` while the check URL
    /// answers 204: `full` (the disagreement in `probe.error` and the log), never the attacker's
    /// login page; the router's next advertisement without the URI forgets it.
    @Test(.needsRoot()) func aSpoofedPortalDoesNotOverruleAWorkingInternet() throws {
        let lab = try HostileLab(api: .json(#"{"captive": true, "user-portal-url": "https://10.77.0.1/phish"}"#))
        defer { lab.destroy() }
        try lab.settle()
        let eventsBefore = lab.recorder.events.count
        try lab.send(RouterAdvertiser.captivePortal(lab.uri("capport")), RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600))
        #expect(waitUntil(timeout: 20) {
            let status = lab.monitor.status
            return status.primary?.captivePortalApi == lab.uri("capport") && status.probe?.error?.contains("says captive") == true
        }, "\(String(describing: lab.monitor.status.probe))")
        let status = lab.monitor.status
        #expect(status.connectivity == .full && status.probe?.portalUrl == nil && status.probe?.httpStatus == 204)
        #expect(lab.api.requests.count >= 1)
        #expect(waitUntil(timeout: 5) { lab.checkerLines.values.contains { $0.hasPrefix("notice: captive-portal API \(lab.uri("capport")) says captive") } },
                "\(lab.checkerLines.values)")
        // The same router's next advertisement comes without option 37: the URI is gone.
        try lab.send(RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600))
        #expect(waitUntil(timeout: 10) { lab.monitor.status.primary?.captivePortalApi == nil },
                "\(String(describing: lab.monitor.status.primary))")
        #expect(waitUntil(timeout: 5) { lab.recorder.events.last?.current.primary?.captivePortalApi == nil })
        let events = Array(lab.recorder.events.dropFirst(eventsBefore))
        #expect(!events.contains { $0.current.connectivity == .portal || $0.current.probe?.portalUrl != nil })
        #expect(lab.monitor.status.primary?.dns == ["2001:db8::53"])
    }
}
}

private extension ProbeServer {
    /// The check URL this lab configures.
    func baseURL(_ veth: VethUplink) -> String { "http://\(veth.gatewayAddress):8080/generate_204" }
}
