import Foundation
import Testing
import ReachabilityCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// Interface names are chosen by whoever may create links (root in some namespace, a container's
/// owner): the kernel allows any byte but `/`, `:`, white space and NUL. What reachd prints of
/// them for people and machines carries no raw control character.
@Suite struct InterfaceNameTests {
    /// The primary interface named `e<ESC>x`: systemd's STATUS=, the log and the metrics'
    /// label show `e\x1bx`.
    @Test(.needsRoot(), .requires(.promtool))
    func controlBytesInANameReachLogStatusAndMetricsEscaped() throws {
        let host = try TestNamespace(tag: "in"), uplink = try TestNamespace(tag: "inu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let hostile = "e\u{1B}x"
        for arguments in [["link", "set", "eth0", "down"], ["link", "set", "eth0", "name", hostile], ["link", "set", hostile, "up"],
                          ["route", "replace", "default", "via", "10.77.0.1", "dev", hostile]] {
            let result = try run(ipCommand, ["-n", host.name] + arguments)
            #expect(result.status == 0, "ip \(arguments): \(result.stderr)")
        }

        let reachd = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig + "[Metrics]\nListen=10.77.0.2:9464\n",
                                         launch: .init(logLevel: nil, notify: true))
        defer { reachd.stop() }
        let listener = try #require(reachd.notifications), daemon = reachd.child
        #expect(waitUntil(timeout: 15) { listener.lines.contains { $0.contains(#"STATUS=ethernet via e\x1bx, internet not checked"#) } },
                "\(listener.lines) \(daemon.stderr)")

        let metrics = try ServiceSystemTests.MetricsDaemonTests.scrape(from: uplink)
        #expect(metrics[#"reachd_primary_info{interface="e\\x1bx",kind="ethernet"}"#] == "1", "\(metrics.keys.filter { $0.contains("primary") })")

        let body = try metricsClient(in: uplink, ["get", "10.77.0.2", "9464"])["body"] as? String ?? ""

        // An event about the link: its name in the log line, escaped.
        _ = try run(ipCommand, ["-n", host.name, "link", "set", hostile, "down"])
        #expect(waitUntil(timeout: 10) { daemon.stderr.contains(#"linkDown e\x1bx"#) || daemon.stderr.contains(#"carrierLost e\x1bx"#) },
                "\(daemon.stderr)")
        #expect(waitUntil(timeout: 10) { listener.lines.last?.contains("STATUS=not reachable") == true }, "\(listener.lines)")

        for (what, text) in [("log", daemon.stderr), ("STATUS=", listener.lines.joined(separator: "\n")), ("metrics", body)] {
            #expect(!text.unicodeScalars.contains("\u{1B}"), "a raw ESC in the \(what)")
        }
    }
}
}
