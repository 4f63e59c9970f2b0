import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// One change, one true event: the real reachd in a namespace, the connectivity check on and
/// pointed at a python server in the uplink namespace. For each scenario: the exact events a
/// `--changes status,connectivity` subscriber receives, and over the full stream no status that
/// contradicts itself and no event that changes nothing but probe details.
///
/// "Nothing more arrived" is proven without sleeping: after the change under test the test
/// makes a marker change that the filtered subscriber wants too (the check turning to `portal`,
/// or the carrier coming back), and the filtered stream must go straight from the expected
/// events to the marker.
@Suite(.serialized) struct EventTruthTests {
    static let url = "http://10.77.0.1:8080/generate_204"
    static let config = """
        [Connectivity]
        Enabled=yes
        URL=\(url)
        Interval=60
        Timeout=2
        [Cellular]
        ModemManager=no
        """

    /// `reachctl monitor --json ARGS`, its lines decoded as events.
    final class Monitor: @unchecked Sendable {
        let child: Child
        init(_ daemon: DaemonUnderTest, _ arguments: [String] = []) throws {
            child = try Child(Binaries.reachctl, ["monitor", "--json"] + arguments + ["--socket", daemon.socketPath])
        }
        var events: [ReachabilityEvent] {
            child.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
        }
        /// Waits for at least `count` events.
        func await(_ count: Int, timeout: TimeInterval = 30) -> Bool { waitUntil(timeout: timeout) { events.count >= count } }
        /// Waits for an event with `sequence`.
        func await(sequence: Int, timeout: TimeInterval = 30) -> Bool {
            waitUntil(timeout: timeout) { events.contains { $0.sequence == sequence } }
        }
        func stop() { child.signal(SIGINT); child.wait() }
    }

    /// (status, connectivity) of the events after `initial`.
    static func pairs(_ events: [ReachabilityEvent]) -> [String] {
        events.dropFirst().map { "\($0.current.status.rawValue)/\($0.current.connectivity.rawValue)" }
    }

    /// The full stream's rules: numbered without gaps, each event's `previous` is the last
    /// `current`, every status consistent and keeping the family rule, `changes` what the statuses say and never empty, and
    /// no event whose only change is probe details.
    static func checkFullStream(_ events: [ReachabilityEvent], _ label: String) {
        guard let first = events.first else { Issue.record("\(label): no events"); return }
        #expect(first.event == .initial && first.changes == [], "\(label)")
        for event in events {
            #expect(event.current.isConsistent, "\(label) #\(event.sequence): \(event.current.connectivity) reachable=\(event.current.reachable) probe=\(String(describing: event.current.probe?.result))")
            if let previous = event.previous { #expect(previous.isConsistent, "\(label) #\(event.sequence) previous") }
            // The family rule, in every event (a failover's included).
            let families = Connectivity.best(event.current.ipv4Connectivity, event.current.ipv6Connectivity)
            #expect(families == event.current.connectivity,
                    "\(label) #\(event.sequence): connectivity \(event.current.connectivity) but IPv4 \(event.current.ipv4Connectivity), IPv6 \(event.current.ipv6Connectivity)")
        }
        for (a, b) in zip(events, events.dropFirst()) {
            #expect(b.sequence == a.sequence + 1, "\(label): gap \(a.sequence) → \(b.sequence)")
            guard let previous = b.previous else { Issue.record("\(label) #\(b.sequence): no previous"); continue }
            #expect(!previous.differs(from: a.current), "\(label) #\(b.sequence): previous is not the last current")
            #expect(!b.changes.isEmpty, "\(label) #\(b.sequence): changes nothing")
            #expect(b.changes == b.current.changes(from: previous).map(\.rawValue), "\(label) #\(b.sequence)")
            if b.changes == ["probe"] {
                #expect(previous.probe?.result != b.current.probe?.result || previous.probe?.portalUrl != b.current.probe?.portalUrl,
                        "\(label) #\(b.sequence): only probe details changed")
            }
        }
    }

    /// Turns the check to `portal` (the marker): sets the server, then asks for checks until
    /// one answers portal (one that was already running may still say full).
    static func makePortalMarker(_ daemon: DaemonUnderTest, _ server: ProbeServer) throws -> Bool {
        try server.set(.redirect("/marker"))
        return try waitUntil(timeout: 30) { try daemon.reachctl(["probe"]).stdout.hasPrefix("internet: portal") }
    }

    struct Lab {
        let host: TestNamespace, uplink: TestNamespace
        let eth0: VethUplink
        let server: ProbeServer
        func destroy() { server.stop(); host.destroy(); uplink.destroy() }
    }

    static func lab(mode: ProbeServer.Mode = .noContent, up: Bool = true) throws -> Lab {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        let eth0 = try VethUplink(host: host, uplink: uplink, defaultRoute: up)
        if !up { try host.ip("link set eth0 down") }
        return Lab(host: host, uplink: uplink, eth0: eth0, server: try ProbeServer(in: uplink, mode: mode))
    }

    /// Uplink up (link up, default route): reachable with connectivity `unknown` — never
    /// `none` — then `full` once the check answers; the IPv6 link-local address and operstate
    /// that follow change neither.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func uplinkUp() throws {
        let lab = try Self.lab(up: false)
        defer { lab.destroy() }
        let daemon = try DaemonUnderTest(namespace: lab.host, config: Self.config)
        let filtered = try Monitor(daemon, ["--changes", "status,connectivity"]), full = try Monitor(daemon)
        defer { filtered.stop(); full.stop() }
        #expect(filtered.await(1) && full.await(1))
        #expect(filtered.events.first.map { "\($0.current.status.rawValue)/\($0.current.connectivity.rawValue)" } == "notReachable/none")

        try lab.host.ip("link set eth0 up")
        try lab.host.ip("route add default via 10.77.0.1 dev eth0 metric 100")
        #expect(filtered.await(3), "\(full.child.lines.joined(separator: "\n"))")
        #expect(try Self.makePortalMarker(daemon, lab.server))
        #expect(filtered.await(4))

        let events = filtered.events
        #expect(Self.pairs(events) == ["ethernet/unknown", "ethernet/full", "ethernet/portal"])
        #expect(events[1].current.probe == nil)
        #expect(events[2].reason.code == .probeResult && events[2].changes == ["connectivity", "ipv4Connectivity", "probe"])
        #expect(full.await(sequence: events[3].sequence))
        Self.checkFullStream(full.events, "uplinkUp")
    }

    /// Carrier loss: one event, `none` with a `none` probe at once (not the old verdict, and no
    /// second event from the checker); carrier back: `unknown`, then `full`.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func carrierLossAndBack() throws {
        let lab = try Self.lab()
        defer { lab.destroy() }
        let daemon = try DaemonUnderTest(namespace: lab.host, config: Self.config)
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        let filtered = try Monitor(daemon, ["--changes", "status,connectivity"]), full = try Monitor(daemon)
        defer { filtered.stop(); full.stop() }
        #expect(filtered.await(1) && full.await(1))

        try lab.eth0.dropCarrier()
        #expect(filtered.await(2))
        // The checker has seen the loss once a Probe() call is answered (it is queued behind it).
        let probe = try daemon.reachctl(["probe", "--json"])
        #expect(try WireJSON.decoder().decode(Probe.self, from: Data(probe.stdout.utf8)).result == Connectivity.none)
        // Marker: carrier back.
        try lab.eth0.restoreCarrier()
        #expect(filtered.await(4))
        #expect(try Self.makePortalMarker(daemon, lab.server))
        #expect(filtered.await(5))

        let events = filtered.events
        #expect(Self.pairs(events) == ["notReachable/none", "ethernet/unknown", "ethernet/full", "ethernet/portal"])
        let lost = events[1]
        #expect(lost.reason.code == .carrierLost && lost.reason.interface == "eth0")
        #expect(lost.current.probe?.result == Connectivity.none)
        #expect(lost.current.probe?.error?.hasPrefix("not reachable: ") == true)
        #expect(lost.current.probe?.portalUrl == nil)
        #expect(events[2].reason.code == .carrierGained && events[2].current.probe == nil)
        #expect(events[3].changes == ["connectivity", "ipv4Connectivity", "probe"])
        #expect(full.await(sequence: events[4].sequence))
        Self.checkFullStream(full.events, "carrierLossAndBack")
    }

    /// Two uplinks of different metric; the better one loses carrier: the primary moves to the
    /// other with the old verdict kept (no `unknown`, no `none`), and the new path's check,
    /// answering the same, makes no event.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func switchBetweenUplinks() throws {
        let lab = try Self.lab()
        defer { lab.destroy() }
        let eth1 = try VethUplink(host: lab.host, uplink: lab.uplink, inner: "eth1", outer: "up1", subnet: 78, metric: 200)
        let daemon = try DaemonUnderTest(namespace: lab.host, config: Self.config)
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("ethernet (eth0) · internet: full")) == true })
        let filtered = try Monitor(daemon, ["--changes", "status,connectivity"]), full = try Monitor(daemon)
        defer { filtered.stop(); full.stop() }
        #expect(filtered.await(1) && full.await(1))

        try lab.eth0.dropCarrier()
        #expect(full.await(2))
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["probe"]).stdout.hasPrefix("internet: full")) == true })
        #expect(lab.server.requests.count >= 2)
        #expect(try Self.makePortalMarker(daemon, lab.server))
        #expect(filtered.await(2))

        #expect(Self.pairs(filtered.events) == ["ethernet/portal"])
        #expect(filtered.events.last?.current.primary?.name == eth1.inner)
        let moved = try #require(full.events.first { $0.current.primary?.name == "eth1" })
        #expect(moved.current.connectivity == .full && moved.current.probe?.result == .full)
        #expect(!moved.changes.contains("connectivity") && !moved.changes.contains("probe"))
        #expect(full.await(sequence: filtered.events[1].sequence))
        Self.checkFullStream(full.events, "switchBetweenUplinks")
    }

    /// Behind a portal, then logged in: `full` once; the portal's re-checks (same verdict) make
    /// no events. The human monitor shows the changes after the reason.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func portalThenLogin() throws {
        let lab = try Self.lab(mode: .redirect("/login"))
        defer { lab.destroy() }
        let daemon = try DaemonUnderTest(namespace: lab.host, config: Self.config)
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: portal")) == true })
        let filtered = try Monitor(daemon, ["--changes", "status,connectivity"]), full = try Monitor(daemon)
        let human = try Child(Binaries.reachctl, ["monitor", "--changes", "connectivity", "--socket", daemon.socketPath])
        defer { filtered.stop(); full.stop(); human.signal(SIGINT); human.wait() }
        #expect(filtered.await(1) && full.await(1))
        #expect(filtered.events[0].current.connectivity == .portal)
        // Re-checks behind the portal (backoff) answer the same: no event.
        #expect(waitUntil(timeout: 20) { lab.server.requests.count >= 3 })

        try lab.server.set(.noContent)
        #expect(filtered.await(2))
        #expect(try Self.makePortalMarker(daemon, lab.server))
        #expect(filtered.await(3))

        let events = filtered.events
        #expect(Self.pairs(events) == ["ethernet/full", "ethernet/portal"])
        #expect(events[1].reason.code == .probeResult && events[1].changes == ["connectivity", "ipv4Connectivity", "probe"])
        #expect(events[2].current.probe?.portalUrl == "http://10.77.0.1:8080/marker")
        #expect(full.await(sequence: events[2].sequence))
        Self.checkFullStream(full.events, "portalThenLogin")
        #expect(waitUntil(timeout: 10) { human.lines.count >= 3 })
        #expect(human.lines[1].contains("#\(events[1].sequence) probeResult [connectivity,ipv4Connectivity,probe]: "), "\(human.lines)")
        #expect(human.lines[1].contains("internet: full"))
    }

    /// `wait --stable`: a flap inside the window starts the count again; the wait ends only
    /// once the condition has held that long after the last change.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func waitStableOutlastsAFlap() throws {
        let lab = try Self.lab()
        defer { lab.destroy() }
        let daemon = try DaemonUnderTest(namespace: lab.host, config: Self.config)
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true })
        let full = try Monitor(daemon)
        defer { full.stop() }
        #expect(full.await(1))

        let wait = try Child(Binaries.reachctl, ["wait", "--internet", "--stable", "4", "--timeout", "60", "--socket", daemon.socketPath])
        try lab.eth0.dropCarrier()
        #expect(full.await(2))
        try lab.eth0.restoreCarrier()
        // Back with internet: from the event that says so, the wait needs 4 s more.
        #expect(waitUntil(timeout: 30) { full.events.last?.current.connectivity == .full })
        let back = Date()
        #expect(wait.wait(timeout: 40) == 0, "\(wait.stderr)")
        let ended = Date()
        // Not a speed measurement: a lower bound that a wait ignoring the flap would miss by seconds
        // (`back` trails the event by at most the polling and pipe latency).
        #expect(ended.timeIntervalSince(back) >= 3.5)
        #expect(wait.lines.last?.contains("internet: full") == true)

        // Without a flap it still waits the whole window first.
        let quiet = Date()
        let steady = try daemon.reachctl(["wait", "--stable", "1.5"])
        #expect(steady.status == 0)
        #expect(Date().timeIntervalSince(quiet) >= 1.5)
    }
}
}
