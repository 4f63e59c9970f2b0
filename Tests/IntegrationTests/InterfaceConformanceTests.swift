import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// What the running reachd serves, judged by an independent client (the PyPI `varlink` package,
/// Tests/python/varlink_check.py): its interface description is the repository's
/// io.reachd.Reachability.varlink, and every reply type (Status with an interface, a modem and a
/// probe in it, Event initial and changed, HostCheck with a TCP check, Probe) has exactly the
/// fields of its declared type, each of its declared type.
@Suite struct InterfaceConformanceTests {
    static let script = Paths.file("Tests/python/varlink_check.py")

    /// The script's JSON lines.
    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test(.needsRoot(), .requires(.pythonVarlink, .dbusDaemon, .busctl, .dbusMock))
    func everyReplyMatchesTheServedDescription() throws {
        try Requirement.pythonVarlink.check()
        let host = try TestNamespace(tag: "i"), uplink = try TestNamespace(tag: "iu")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink, inner: "mm0", subnet: 77)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        // A modem on the uplink, so that Status carries a Cellular object too.
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)
        let daemon = try DaemonUnderTest(namespace: host, config: ConnectivitySystemTests.ProbeIntegrationTests.config(modemManager: true),
                                         environment: [systemBusVariable: bus.address])
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true },
                "\(daemon.child.stderr)")

        let description = try run(Binaries.python, [Self.script, daemon.socketPath, "--description",
                                                    Paths.file("Sources/ReachabilityCore/Varlink/io.reachd.Reachability.varlink")])
        let served = Self.objects([description.stdout]).first
        #expect(served?["matches"] as? Bool == true, "\(description.stdout) \(description.stderr)")

        func call(_ method: String, _ parameters: String) throws -> [[String: Any]] {
            let result = try run(Binaries.python, [Self.script, daemon.socketPath, "--call", "io.reachd.Reachability." + method, parameters])
            #expect(result.status == 0, "\(method): \(result.stdout) \(result.stderr)")
            return Self.objects(result.stdout.split(separator: "\n").map(String.init))
        }
        func expectValid(_ replies: [[String: Any]], _ what: String) {
            #expect(!replies.isEmpty, "\(what): no reply")
            for reply in replies { #expect(reply["valid"] as? Bool == true, "\(what): \(reply)") }
        }

        let status = try call("GetStatus", "{}")
        expectValid(status, "GetStatus")
        // The optional parts are there, so their types were checked too.
        let current = (status.first?["reply"] as? [String: Any])?["status"] as? [String: Any]
        #expect(current?["cellular"] is [String: Any] && current?["probe"] is [String: Any] && current?["primary"] is [String: Any],
                "\(String(describing: current))")

        expectValid(try call("Check", #"{"host": "10.77.0.1", "port": 8080}"#), "Check")
        expectValid(try call("Probe", "{}"), "Probe")

        // Subscribe: the initial event (no previous) and one change (with one). The carrier goes
        // from the only uplink: one event says notReachable and connectivity none together (a
        // path that cannot reach anything is not checked, so no second event follows). Only
        // status changes are asked for, because the link-local IPv6 address the kernel adds once
        // its duplicate detection ends is a change of its own and may come at any time.
        let subscriber = try Child(Binaries.python, [Self.script, daemon.socketPath, "--call", "io.reachd.Reachability.Subscribe",
                                                     #"{"changes": ["status"]}"#, "2"])
        #expect(waitUntil(timeout: 15) { Self.objects(subscriber.lines).count == 1 }, "\(subscriber.stderr)")
        try veth.dropCarrier()
        #expect(subscriber.wait(timeout: 15) == 0, "\(subscriber.lines) \(subscriber.stderr)")
        let events = Self.objects(subscriber.lines)
        #expect(events.count == 2)
        expectValid(events, "Subscribe")
        let bodies = events.compactMap { ($0["reply"] as? [String: Any])?["event"] as? [String: Any] }
        #expect(bodies.compactMap { $0["event"] as? String } == ["initial", "reachabilityChanged"])
        let changed = bodies.last?["current"] as? [String: Any]
        #expect(changed?["status"] as? String == "notReachable" && changed?["connectivity"] as? String == "none",
                "\(String(describing: changed))")
        #expect(bodies.last?["previous"] is [String: Any])
    }
}
}
