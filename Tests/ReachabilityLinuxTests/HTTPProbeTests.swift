import Foundation
import ReachabilityCore
import ReachabilityLinux
import Testing
import TestSupport

/// The machine under test (`host`, link eth0, 10.77.0.2) and its network (`uplink`, 10.77.0.1)
/// with the probe server on 10.77.0.1:8080. The probe's sockets are made in `host`.
final class ProbeLab: @unchecked Sendable {
    let host: TestNamespace
    let uplink: TestNamespace
    let veth: VethUplink
    let server: ProbeServer

    init(mode: ProbeServer.Mode = .noContent) throws {
        host = try TestNamespace(tag: "h")
        uplink = try TestNamespace(tag: "u")
        veth = try VethUplink(host: host, uplink: uplink)
        server = try ProbeServer(in: uplink, mode: mode)
    }

    var baseURL: String { "http://\(veth.gatewayAddress):\(server.port)" }

    func request(_ url: String? = nil, interface: String? = "eth0", timeout: TimeInterval = 3) throws -> HTTPProbe.Request {
        HTTPProbe.Request(url: try ProbeURL(url ?? baseURL + "/generate_204"), interface: interface,
                          sourceAddresses: [veth.hostAddress], timeout: timeout, networkNamespace: host.name)
    }

    /// Runs a check and judges it as reachd would.
    func check(_ url: String? = nil, expected: String = "", timeout: TimeInterval = 3) throws -> (Probe, HTTPProbe.Result) {
        let request = try request(url, timeout: timeout)
        let result = HTTPProbe.run(request)
        let probe = ProbeVerdict.probe(url: request.url.string, expectedResponse: expected, outcome: result.outcome,
                                       rttMs: result.rttMs, checkedAt: Date())
        return (probe, result)
    }

    func destroy() {
        server.stop()
        host.destroy()
        uplink.destroy()
    }
}

private func failureKind(_ result: HTTPProbe.Result) -> ProbeFailure.Kind? {
    if case .failure(let failure) = result.outcome { return failure.kind }
    return nil
}

extension ConnectivitySystemTests {
@Suite struct HTTPProbeTests {
    @Test(.needsRoot()) func noContentIsFull() throws {
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy() }
        let (probe, result) = try lab.check()
        #expect(probe.result == .full)
        #expect(probe.httpStatus == 204)
        #expect(probe.error == nil)
        #expect(result.rttMs != nil)
        // The request went out as documented: path, Host with the port, our User-Agent.
        #expect(lab.server.requests == ["/generate_204 10.77.0.1:8080 reachd/0.1 None"])
    }

    @Test(.needsRoot()) func expectedBodyIsFull() throws {
        let lab = try ProbeLab(mode: .body("NetworkManager is online\n"))
        defer { lab.destroy() }
        #expect(try lab.check(expected: "NetworkManager is online").0.result == .full)
        // The same answer without a Response= is not the expected 204.
        #expect(try lab.check(expected: "").0.result == .portal)
    }

    @Test(.needsRoot()) func emptyOKIsFull() throws {
        let lab = try ProbeLab(mode: .emptyOK)
        defer { lab.destroy() }
        #expect(try lab.check().0.result == .full)
    }

    @Test(.needsRoot()) func redirectIsPortalWithResolvedURL() throws {
        let lab = try ProbeLab(mode: .redirect("/portal/login?continue=1"))
        defer { lab.destroy() }
        let (probe, _) = try lab.check()
        #expect(probe.result == .portal)
        #expect(probe.httpStatus == 302)
        #expect(probe.portalUrl == "http://10.77.0.1:8080/portal/login?continue=1")
        // Not followed: one request only.
        #expect(lab.server.requests.count == 1)
    }

    @Test(.needsRoot()) func loginPageIsPortal() throws {
        let lab = try ProbeLab(mode: .login)
        defer { lab.destroy() }
        let (probe, result) = try lab.check()
        #expect(probe.result == .portal)
        #expect(probe.httpStatus == 200)
        guard case .response(let response) = result.outcome else { Issue.record("no response: \(result.outcome)"); return }
        #expect(String(decoding: response.body, as: UTF8.self).contains("Please log in"))
    }

    @Test(.needsRoot()) func hangingServerIsLimitedByTheTimeout() throws {
        let lab = try ProbeLab(mode: .hang)
        defer { lab.destroy() }
        let (probe, result) = try lab.check(timeout: 1)
        #expect(failureKind(result) == .timeout)
        #expect(probe.result == .limited)
        #expect(probe.error?.contains("timed out") == true)
    }

    @Test(.needsRoot()) func refusedIsLimited() throws {
        let lab = try ProbeLab()
        defer { lab.destroy() }
        let (probe, result) = try lab.check("http://10.77.0.1:8081/")
        #expect(failureKind(result) == .refused)
        #expect(probe.result == .limited)
        #expect(probe.error?.contains("10.77.0.1:8081") == true)
    }

    /// The system resolver (getaddrinfo) in a namespace with no route to any name server: the
    /// look-up fails without a packet leaving the namespace → limited.
    @Test(.needsRoot()) func unresolvableHostIsLimited() throws {
        let isolated = try TestNamespace(tag: "d")
        defer { isolated.destroy() }
        let request = HTTPProbe.Request(url: try ProbeURL("http://nonexistent.invalid:8080/generate_204"),
                                        timeout: 3, networkNamespace: isolated.name)
        let result = HTTPProbe.run(request)
        #expect(failureKind(result) == .dnsFailure)
        let probe = ProbeVerdict.probe(url: request.url.string, expectedResponse: "", outcome: result.outcome, checkedAt: Date())
        #expect(probe.result == .limited)
        #expect(probe.error?.contains("nonexistent.invalid") == true)
    }

    /// Names through a hosts file made for the test: one maps to the server, one is missing.
    @Test(.needsRoot()) func namesFromAHostsFile() throws {
        let lab = try ProbeLab()
        defer { lab.destroy() }
        let hosts = FileManager.default.temporaryDirectory.appendingPathComponent("\(lab.host.name)-hosts").path
        try "10.77.0.1 probe.test\n".write(toFile: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hosts) }
        var configuration = HostResolver.Configuration()
        configuration.hostsFile = hosts
        configuration.timeout = 2
        let resolver = HostResolver(configuration: configuration)

        var request = try lab.request("http://probe.test:8080/generate_204")
        request.resolver = resolver
        guard case .response(let response) = HTTPProbe.run(request).outcome else { Issue.record("no response"); return }
        #expect(response.status == 204)
        #expect(lab.server.requests == ["/generate_204 probe.test:8080 reachd/0.1 None"])

        request = try lab.request("http://nonexistent.invalid:8080/generate_204")
        request.resolver = resolver
        let result = HTTPProbe.run(request)
        #expect(failureKind(result) == .dnsFailure)
        #expect(lab.server.requests.count == 1)
    }

    /// The socket is bound to the interface: bound to another link, the server is out of reach
    /// even though the routing table knows the way.
    @Test(.needsRoot()) func bindsToTheInterface() throws {
        let lab = try ProbeLab()
        defer { lab.destroy() }
        let other = try TestNamespace(tag: "o")
        defer { other.destroy() }
        _ = try VethUplink(host: lab.host, uplink: other, inner: "eth1", outer: "up1", subnet: 78, defaultRoute: false)
        var request = try lab.request(interface: "eth1", timeout: 2)
        request.sourceAddresses = []
        let result = HTTPProbe.run(request)
        #expect(failureKind(result) == .unreachable || failureKind(result) == .timeout)
        #expect(lab.server.requests.isEmpty)
        #expect(failureKind(HTTPProbe.run(try lab.request(interface: "eth0"))) == nil)
    }

    /// The link named `w\xff0`, not UTF-8: its name as reachd shows it (U+FFFD in place of the
    /// byte) names no link, and the check binds by the link's index instead.
    @Test(.needsRoot()) func bindsByIndexWhenTheNameIsNotUTF8() throws {
        let lab = try ProbeLab()
        defer { lab.destroy() }
        let script = """
        import subprocess, sys
        ns, name = sys.argv[1].encode(), b"w\\xff0"
        for args in ([b"link", b"set", b"eth0", b"down"], [b"link", b"set", b"eth0", b"name", name], [b"link", b"set", name, b"up"],
                     [b"route", b"replace", b"default", b"via", b"10.77.0.1", b"dev", name]):
            subprocess.run([b"ip", b"-n", ns] + args, check=True)
        print(int(subprocess.check_output([b"ip", b"-n", ns, b"-o", b"link", b"show", b"dev", name]).split(b":")[0]))
        """
        let renamed = try run("/usr/bin/python3", ["-c", script, lab.host.name])
        let index = try #require(Int(renamed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(renamed.stderr)")
        var byName = try lab.request(interface: "w\u{FFFD}0")
        byName.sourceAddresses = []
        #expect(failureKind(HTTPProbe.run(byName)) != nil, "a name that is not the kernel's binds to nothing")
        var byIndex = byName
        byIndex.interfaceIndex = index
        #expect(failureKind(HTTPProbe.run(byIndex)) == nil)
        #expect(lab.server.requests.count == 1)
    }

    @Test(.needsRoot()) func uplinkDownIsNotFull() throws {
        let lab = try ProbeLab()
        defer { lab.destroy() }
        try lab.veth.dropCarrier()
        let (probe, result) = try lab.check(timeout: 1.5)
        #expect(failureKind(result) != nil)
        #expect(probe.result == .limited)
        // With the status saying "not reachable" the verdict is none, whatever the check says.
        let verdict = ProbeVerdict.probe(url: probe.url, expectedResponse: "", outcome: result.outcome,
                                         reachable: false, checkedAt: Date())
        #expect(verdict.result == .none)
    }

    @Test(.needsRoot()) func cancelStopsAHangingCheck() throws {
        let lab = try ProbeLab(mode: .hang)
        defer { lab.destroy() }
        let box = ResultBox()
        let handle = HTTPProbe.start(try lab.request(timeout: 60)) { box.set($0) }
        #expect(waitUntil(timeout: 10) { lab.server.requests.count == 1 })
        handle.cancel()
        #expect(waitUntil(timeout: 10) { box.get() != nil })
        if case .failure(let failure) = box.get()?.outcome {
            #expect(failure.message == "cancelled")
        } else {
            Issue.record("expected a cancelled failure, got \(String(describing: box.get()))")
        }
    }

    /// https: the certificate is verified against `CAFile=` (the test's own CA), and its name
    /// against the URL's address; a certificate nobody vouches for, or for another address, is
    /// a TLS failure (limited) that names the reason.
    @Test(.needsRoot()) func httpsVerifiesTheCertificate() throws {
        let authority = try TestCertificateAuthority()
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy(); authority.remove() }
        let gateway = lab.veth.gatewayAddress
        let good = try ProbeServer(in: lab.uplink, port: 8443, mode: .noContent,
                                   certificate: try authority.serverCertificate(ipAddress: gateway, name: "good"))
        let selfSigned = try ProbeServer(in: lab.uplink, port: 8444, mode: .noContent,
                                         certificate: try authority.serverCertificate(ipAddress: gateway, name: "self", selfSigned: true))
        let otherName = try ProbeServer(in: lab.uplink, port: 8445, mode: .noContent,
                                        certificate: try authority.serverCertificate(ipAddress: "192.0.2.9", name: "other"))
        defer { good.stop(); selfSigned.stop(); otherName.stop() }

        func check(_ port: Int, caFile: String?) throws -> Probe {
            var request = try lab.request("https://\(gateway):\(port)/generate_204")
            request.caFile = caFile
            let result = HTTPProbe.run(request)
            return ProbeVerdict.probe(url: request.url.string, expectedResponse: "", outcome: result.outcome,
                                      rttMs: result.rttMs, checkedAt: Date())
        }
        let trusted = try check(8443, caFile: authority.certificate)
        #expect(trusted.result == .full && trusted.httpStatus == 204, "\(trusted)")
        #expect(good.requests.count == 1)
        let unknownCA = try check(8443, caFile: nil)
        #expect(unknownCA.result == .limited)
        #expect(unknownCA.error?.contains("certificate verify failed") == true, "\(unknownCA.error ?? "")")
        let unsigned = try check(8444, caFile: authority.certificate)
        #expect(unsigned.result == .limited)
        #expect(unsigned.error?.contains("self-signed certificate") == true, "\(unsigned.error ?? "")")
        let mismatch = try check(8445, caFile: authority.certificate)
        #expect(mismatch.result == .limited)
        #expect(mismatch.error?.contains("IP address mismatch") == true, "\(mismatch.error ?? "")")
        // The ordinary check over plain http still works beside it.
        #expect(try lab.check().0.result == .full)
        // A CAFile that is not there is named.
        let missing = try check(8443, caFile: "/nonexistent/ca.pem")
        #expect(missing.result == .limited && missing.error?.contains("CAFile=/nonexistent/ca.pem") == true, "\(missing.error ?? "")")
    }

    /// A host name through the real resolver (/etc/hosts: localhost), a server on loopback.
    @Test(.needsRoot()) func resolvesNames() throws {
        let ns = try TestNamespace(tag: "l")
        defer { ns.destroy() }
        let server = try ProbeServer(in: ns, port: 8090, mode: .noContent)
        defer { server.stop() }
        let request = HTTPProbe.Request(url: try ProbeURL("http://localhost:8090/check"), interface: "lo",
                                        timeout: 3, networkNamespace: ns.name)
        let result = HTTPProbe.run(request)
        guard case .response(let response) = result.outcome else { Issue.record("\(result.outcome)"); return }
        #expect(response.status == 204)
        #expect(server.requests == ["/check localhost:8090 reachd/0.1 None"])
    }
}
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: HTTPProbe.Result?
    func set(_ result: HTTPProbe.Result) { lock.withLock { value = result } }
    func get() -> HTTPProbe.Result? { lock.withLock { value } }
}
