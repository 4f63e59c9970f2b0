import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension ConnectivitySystemTests {
/// reachd's connectivity check end to end: the daemon in `host`, the probe server in `uplink`,
/// `reachctl probe` / `reachctl wait --internet` against it.
@Suite struct ProbeIntegrationTests {
    /// `modemManager`: only for a daemon given a private system bus.
    static func config(port: Int = 8080, enabled: Bool = true, modemManager: Bool = false) -> String {
        """
        [Connectivity]
        Enabled=\(enabled ? "yes" : "no")
        URL=http://10.77.0.1:\(port)/generate_204
        Interval=60
        Timeout=2
        [Cellular]
        ModemManager=\(modemManager ? "yes" : "no")
        [Limits]
        ProbeMinInterval=100ms
        """
    }

    @Test(.needsRoot()) func reachctlProbeReportsFullThenPortal() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config())

        let json = try daemon.reachctl(["probe", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let probe = try WireJSON.decoder().decode(Probe.self, from: Data(json.stdout.utf8))
        #expect(probe.result == .full)
        #expect(probe.httpStatus == 204)
        #expect(probe.url == "http://10.77.0.1:8080/generate_204")
        #expect(waitUntil(timeout: 10) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })

        try server.set(.redirect("/login"))
        // A Probe() within ProbeMinInterval= of the last check shares its verdict: ask until one
        // is a new check, which meets the redirect.
        var human: (status: Int32, stdout: String, stderr: String) = (-1, "", "")
        #expect(waitUntil(timeout: 10) {
            human = (try? daemon.reachctl(["probe"])) ?? human
            return human.stdout.hasPrefix("internet: portal")
        }, "\(human.stdout) \(human.stderr)")
        #expect(human.status == 0)
        #expect(human.stdout.hasPrefix("internet: portal · HTTP 302 · "))
        #expect(human.stdout.hasSuffix(" ms · log in at http://10.77.0.1:8080/login · http://10.77.0.1:8080/generate_204"))
        let status = try WireJSON.decoder().decode(Status.self, from: Data(try daemon.reachctl(["status", "--json"]).stdout.utf8))
        #expect(status.connectivity == .portal)
        #expect(status.probe?.portalUrl == "http://10.77.0.1:8080/login")
    }

    @Test(.needsRoot()) func waitInternetReturnsOnceLoggedIn() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .login)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config())
        #expect(waitUntil(timeout: 10) { (try? daemon.reachctl(["status"]).stdout.contains("internet: portal")) == true })

        // No other client holds a connection: the wait's is the one the daemon then holds.
        #expect(waitUntil(timeout: 10) { daemon.openConnections == 0 })
        let wait = try Child(Binaries.reachctl, ["wait", "--internet", "--timeout", "30", "--socket", daemon.socketPath])
        // The daemon holds its connection: reachctl asked while the portal was there.
        #expect(waitUntil(timeout: 10) { daemon.openConnections == 1 || !wait.isRunning })
        #expect(wait.isRunning, "reachctl wait returned behind the portal: \(wait.lines) \(wait.stderr)")
        try server.set(.noContent)
        #expect(wait.wait(timeout: 30) == 0, "\(wait.stderr)")
        // A wait that had taken the portal for internet would have printed it and ended there:
        // the one line it prints is the status that met the condition.
        #expect(wait.lines.count == 1 && wait.lines.last?.contains("internet: full") == true, "\(wait.lines)")
    }

    /// Disabled: `reachctl probe` exits 1, connectivity unknown, no request; enabled by SIGHUP:
    /// checked at once.
    @Test(.needsRoot()) func probeDisabledThenEnabledByReload() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config(enabled: false))
        let probe = try daemon.reachctl(["probe"])
        #expect(probe.status == 1)
        #expect(probe.stderr.contains("disabled"))
        #expect(try daemon.reachctl(["status"]).stdout.contains("internet: not checked"))
        #expect(server.requests.isEmpty)

        try Self.config().write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        #expect(try daemon.reachctl(["probe"]).status == 0)
    }

    /// reachd as an unprivileged user (as under reachd.service): the check still binds to the
    /// interface (SO_BINDTODEVICE, or its address) and reports full.
    @Test(.needsRoot()) func unprivilegedDaemonChecks() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config(), launch: .init(user: "nobody", logLevel: nil))
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true },
                "\(daemon.child.stderr)")
        #expect(server.requests.count >= 1)
    }
}
}
