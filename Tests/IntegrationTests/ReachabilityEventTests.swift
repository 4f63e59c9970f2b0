import Foundation
import ReachabilityClient
import ReachabilityCore
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// Events from the real monitor: a veth uplink comes and goes under a running reachd.
@Suite struct ReachabilityEventTests {
    /// Parses `reachctl monitor --json` lines.
    static func events(_ lines: [String]) -> [ReachabilityEvent] {
        lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
    }

    @Test(.needsRoot()) func monitorJSONSeesInitialThenChangesWithReasons() throws {
        let host = try TestNamespace(tag: "m"), uplink = try TestNamespace(tag: "mu")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        #expect(waitUntil(timeout: 10) { !Self.events(monitor.lines).isEmpty })
        let initial = try #require(Self.events(monitor.lines).first)
        #expect(initial.event == .initial && initial.previous == nil && !initial.current.reachable)
        #expect(monitor.lines.count == 1)

        let veth = try VethUplink(host: host, uplink: uplink)
        func firstEvent(where predicate: @escaping (ReachabilityEvent) -> Bool) -> ReachabilityEvent? {
            _ = waitUntil(timeout: 10) { Self.events(monitor.lines).contains(where: predicate) }
            return Self.events(monitor.lines).first(where: predicate)
        }
        let online = firstEvent { $0.event == .reachabilityChanged && $0.current.reachable }
        #expect(online?.reason.code == .routeAdded)
        #expect(online?.reason.interface == "eth0")
        #expect(online?.previous?.reachable == false)
        #expect(online?.current.primary?.name == "eth0" && online?.current.status == .ethernet)

        try veth.dropCarrier()
        let lost = firstEvent { $0.reason.code == .carrierLost }
        #expect(lost?.reason.interface == "eth0" && lost?.current.reachable == false && lost?.previous?.reachable == true)

        try veth.restoreCarrier()
        let gained = firstEvent { $0.reason.code == .carrierGained }
        #expect(gained?.reason.interface == "eth0" && gained?.current.reachable == true)

        // Each line one event, numbers strictly rising, each change's previous = the last current.
        let all = Self.events(monitor.lines)
        #expect(all.count == monitor.lines.count)
        for (a, b) in zip(all, all.dropFirst()) {
            #expect(b.sequence == a.sequence + 1)
            #expect(b.event == .reachabilityChanged)
            #expect(b.previous.map { !$0.differs(from: a.current) } == true)
        }
        monitor.signal(SIGINT)
        #expect(monitor.wait() == 0)
    }

    @Test(.needsRoot()) func waitExitsZeroWhenTheUplinkComes() throws {
        let host = try TestNamespace(tag: "w"), uplink = try TestNamespace(tag: "wu")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let wait = try Child(Binaries.reachctl, ["wait", "--timeout", "10", "--socket", daemon.socketPath])
        // The daemon holds its connection: the uplink comes after reachctl asked, so it must wait.
        #expect(waitUntil(timeout: 10) { daemon.openConnections == 1 || !wait.isRunning })
        #expect(wait.isRunning, "reachctl wait returned before the uplink came: \(wait.lines) \(wait.stderr)")
        _ = try VethUplink(host: host, uplink: uplink)
        #expect(wait.wait(timeout: 10) == 0, "\(wait.stderr)")
        #expect(wait.lines.first?.hasPrefix("online · ethernet (eth0)") == true, "\(wait.lines)")

        // Met already: returns at once; quiet prints nothing.
        let again = try daemon.reachctl(["wait", "--timeout", "5", "--interface", "eth0", "-q"])
        #expect(again.status == 0 && again.stdout.isEmpty)
    }

    @Test(.needsRoot()) func waitExitsOneWhenTheUplinkNeverComes() throws {
        let host = try TestNamespace(tag: "n")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let result = try daemon.reachctl(["wait", "--timeout", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("timed out"))
        #expect(try daemon.reachctl(["wait", "--timeout", "1", "-q"]).stderr.isEmpty)
    }

    @Test(.needsRoot()) func statusLineAndJSONWhenOnline() throws {
        let host = try TestNamespace(tag: "o"), uplink = try TestNamespace(tag: "ou")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        _ = try VethUplink(host: host, uplink: uplink)
        #expect(waitUntil(timeout: 10) { (try? daemon.reachctl(["status"]).stdout) == "online · ethernet (eth0) · internet: not checked · IPv4 · quality: good (4g, default)" },
                "\((try? daemon.reachctl(["status"]).stdout) ?? "")")
        let json = try daemon.reachctl(["status", "--json"])
        let status = try WireJSON.decoder().decode(Status.self, from: Data(json.stdout.utf8))
        #expect(status.primary?.name == "eth0" && status.gateways == ["10.77.0.1"])
    }

    /// Event numbers keep rising across restarts: reachd keeps the last one (a block ahead) in
    /// its state directory and starts above it. A kept number an hour ahead of the clock stands
    /// for a clock stepped an hour back: the next run still starts above it, says so, and a plain
    /// restart after that goes on rising.
    @Test(.needsRoot()) func eventNumbersRiseAcrossRestartsWhateverTheClock() throws {
        let host = try TestNamespace(tag: "sq")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let file = daemon.directory + "/event-sequence"
        func currentSequence() throws -> Int {
            let monitor = try EventTruthTests.Monitor(daemon)
            defer { monitor.stop() }
            try #require(monitor.await(1), "\(daemon.child.stderr)")
            return try #require(monitor.events.first).sequence
        }
        func kept() throws -> Int {
            try #require(Int(String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let first = try currentSequence()
        #expect(try kept() >= first)
        daemon.stop()

        let ahead = Int(Date().timeIntervalSince1970 * 1000) + 3_600_000
        try "\(ahead)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try daemon.start()
        let second = try currentSequence()
        #expect(second > ahead && second > first)
        #expect(try kept() >= second)
        #expect(daemon.child.stderr.contains("the wall clock is behind the last event number (\(ahead))"), "\(daemon.child.stderr)")

        try daemon.restart()
        #expect(try currentSequence() > second)
    }

    /// reachd restarts under a subscribed ReachabilityClient: the stream carries on, every event
    /// once, numbers rising, a resync initial marking the restart, and later changes arrive:
    /// the carrier loss comes after the resync, with no duplicate and no number missing before
    /// it, whatever the kernel reports after it (IPv6 routes and addresses go a moment later).
    @Test(.needsRoot()) func clientStreamSurvivesADaemonRestart() async throws {
        let host = try TestNamespace(tag: "r"), uplink = try TestNamespace(tag: "ru")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        let collected = Recorder<ReachabilityEvent>()
        let task = Task {
            for try await event in client.events() { collected.append(event) }
        }
        defer { task.cancel() }
        #expect(await eventually { collected.all.count == 1 })

        try daemon.restart()
        #expect(await eventually { collected.all.contains { $0.reason.code == .resync } })

        /// The events from the resync on.
        func afterResync() -> [ReachabilityEvent] { Array(collected.all.drop { $0.reason.code != .resync }) }
        let veth = try VethUplink(host: host, uplink: uplink)
        #expect(await eventually { afterResync().contains { $0.current.reachable } })
        try veth.dropCarrier()
        #expect(await eventually { afterResync().contains { $0.reason.code == .carrierLost } }, "\(collected.all.map(\.reason))")

        let events = collected.all
        for (a, b) in zip(events, events.dropFirst()) { #expect(b.sequence > a.sequence) }
        #expect(Set(events.map(\.sequence)).count == events.count)
        #expect(events.filter { $0.event == .initial }.count == 2)   // the first, and the resync
        // After the resync, nothing is missing and nothing comes twice: numbers are consecutive,
        // each event chains on the one before and changes something.
        let afterRestart = afterResync()
        for (a, b) in zip(afterRestart, afterRestart.dropFirst()) {
            #expect(b.sequence == a.sequence + 1)
            #expect(b.previous.map { !$0.differs(from: a.current) } == true)
            #expect(b.current.differs(from: a.current), "#\(b.sequence) repeats #\(a.sequence)")
        }
        // The loss itself: of eth0, from reachable to not.
        let lost = afterRestart.first { $0.reason.code == .carrierLost }
        #expect(lost?.reason.interface == "eth0" && lost?.previous?.reachable == true && lost?.current.reachable == false)
    }
}
}
