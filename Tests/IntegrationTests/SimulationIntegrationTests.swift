import Foundation
import ReachabilityCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `reachctl monitor --json` as a Subscribe client: its events so far.
private func events(_ monitor: Child) -> [ReachabilityEvent] {
    monitor.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
}

/// Waits until the monitor has printed at least `count` events; returns them.
private func waitForEvents(_ monitor: Child, count: Int, timeout: TimeInterval = 15) -> [ReachabilityEvent] {
    _ = waitUntil(timeout: timeout) { events(monitor).count >= count }
    return events(monitor)
}

/// The JSON objects a python helper printed.
private func objects(_ child: Child) -> [[String: JSONValue]] {
    child.lines.compactMap { (try? JSONValue(parsing: Data($0.utf8)))?.objectValue }
}

/// A daemon in a namespace with a veth uplink (reachable over ethernet), and a subscriber.
private final class SimulationSetup: @unchecked Sendable {
    let host: TestNamespace
    let uplink: TestNamespace
    let veth: VethUplink
    let daemon: DaemonUnderTest
    let monitor: Child

    init(tag: String, config: String = DaemonUnderTest.defaultConfig) throws {
        host = try TestNamespace(tag: tag)
        uplink = try TestNamespace(tag: tag + "u")
        veth = try VethUplink(host: host, uplink: uplink)
        let daemon = try DaemonUnderTest(namespace: host, config: config)
        self.daemon = daemon
        // Wait for the real path first, so the simulation's events are the only ones to come:
        // reachable, and with IPv6 its link-local address through duplicate address detection
        // (which the daemon reports as an event of its own a second or two after the link came up).
        let linkLocal = try veth.settledLinkLocal()
        _ = waitUntil(timeout: 10) {
            guard let status = try? daemon.reachctl(["status", "--json"]).stdout else { return false }
            return status.contains("\"reachable\":true") && linkLocal.map { status.contains($0) } ?? true
        }
        monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        _ = waitForEvents(monitor, count: 1)
    }

    var initial: ReachabilityEvent? { events(monitor).first }

    func destroy() {
        monitor.signal(SIGINT); monitor.wait(timeout: 5)
        daemon.stop()
        host.destroy(); uplink.destroy()
    }
}

extension SystemTests {
@Suite(.serialized) struct SimulationIntegrationTests {
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func expiresByItselfWithOneEventBack() throws {
        let setup = try SimulationSetup(tag: "se")
        defer { setup.destroy() }
        let initial = try #require(setup.initial)
        #expect(initial.current.status == .ethernet && !initial.current.simulated)

        let result = try setup.daemon.reachctl(["simulate", "wwan2G", "--connectivity", "portal", "--for", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("wwan2G") && result.stdout.contains("simulated"), "\(result.stdout)")

        let all = waitForEvents(setup.monitor, count: 3)
        #expect(all.count == 3, "\(setup.monitor.lines)")
        guard all.count >= 3 else { return }
        let (start, back) = (all[1], all[2])
        #expect(start.sequence == initial.sequence + 1)
        #expect(start.reason.code == .simulation)
        #expect(start.current.simulated && start.current.status == .wwan2G && start.current.connectivity == .portal)
        #expect(start.current.cellular?.generation == "2G" && start.current.expensive)
        #expect(start.current.isConsistent)
        #expect(start.changes.contains("simulated") && start.changes.contains("status") && start.changes.contains("cellular"))
        #expect(back.sequence == start.sequence + 1)
        #expect(back.reason.code == .simulation)
        #expect(!back.current.simulated && back.current.status == .ethernet && back.current.cellular == nil)
        #expect(back.changes.contains("simulated"))
    }

    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func resetEndsItAndStatusShowsIt() throws {
        let setup = try SimulationSetup(tag: "sr")
        defer { setup.destroy() }
        let started = try setup.daemon.reachctl(["simulate", "wifi", "--expensive", "--for", "600"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(waitForEvents(setup.monitor, count: 2).count == 2)

        // GetStatus and `reachctl status` say a simulation is on.
        let human = try setup.daemon.reachctl(["status"])
        #expect(human.stdout.hasSuffix("· simulated"), "\(human.stdout)")
        #expect(human.stdout.contains("wifi (eth0)") && human.stdout.contains("expensive"))
        let json = try setup.daemon.reachctl(["status", "--json"])
        let status = try WireJSON.decoder().decode(Status.self, from: Data(json.stdout.utf8))
        #expect(status.simulated && status.status == .wifi && status.primary?.kind == .wifi)

        let reset = try setup.daemon.reachctl(["simulate", "--reset"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(reset.stdout.contains("ethernet") && !reset.stdout.contains("simulated"), "\(reset.stdout)")
        let all = waitForEvents(setup.monitor, count: 3)
        #expect(all.count == 3)
        #expect(all.last?.sequence == all[1].sequence + 1)
        #expect(all.last?.current.simulated == false && all.last?.reason.code == .simulation)
        let after = try setup.daemon.reachctl(["status"])
        #expect(!after.stdout.contains("simulated"))
        // A second reset changes nothing and sends nothing: the next event the subscriber gets
        // is a marker simulation's, numbered right after the first reset's.
        #expect(try setup.daemon.reachctl(["simulate", "--reset"]).status == 0)
        #expect(try setup.daemon.reachctl(["status"]).status == 0)
        #expect(try setup.daemon.reachctl(["simulate", "wwan2G", "--for", "600"]).status == 0)
        let marked = waitForEvents(setup.monitor, count: 4)
        #expect(marked.count == 4)
        #expect(marked.last?.sequence == (all.last?.sequence ?? 0) + 1)
        #expect(marked.last?.current.simulated == true && marked.last?.current.status == .wwan2G)
    }

    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func whileConnectedEndsWhenTheCallerHangsUp() throws {
        let setup = try SimulationSetup(tag: "sw")
        defer { setup.destroy() }
        let player = try Child(Binaries.reachctl, ["simulate", "wwan4G", "--socket", setup.daemon.socketPath])
        let all = waitForEvents(setup.monitor, count: 2)
        #expect(all.count == 2 && all.last?.current.status == .wwan4G && all.last?.current.simulated == true)
        #expect(all.last?.current.cellular?.accessTechnology == "lte")
        #expect(waitUntil(timeout: 5) { player.lines.contains { $0.contains("until interrupted") } })
        #expect(player.isRunning)
        player.signal(SIGINT)
        #expect(player.wait(timeout: 5) == 0)
        let ended = waitForEvents(setup.monitor, count: 3)
        #expect(ended.count == 3)
        #expect(ended.last?.sequence == (all.last?.sequence ?? 0) + 1)
        #expect(ended.last?.current.simulated == false && ended.last?.reason.detail == "simulating client hung up")
    }

    /// The real network is tracked underneath: carrier changes during a simulation publish
    /// nothing, and its end brings them in one event, numbered right after the simulation's.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func realCarrierLossShowsInOneEventWhenItEnds() throws {
        let setup = try SimulationSetup(tag: "sc")
        defer { setup.destroy() }
        #expect(try setup.daemon.reachctl(["simulate", "wifi", "--for", "600"]).status == 0)
        let simulated = waitForEvents(setup.monitor, count: 2)
        #expect(simulated.count == 2)
        let start = try #require(simulated.last)

        // Three real changes; the daemon's debug log names the real status of each one it held.
        func lastHeld() -> String? {
            setup.daemon.child.stderr.split(separator: "\n").last { $0.hasSuffix(", held while the simulation is on") }
                .flatMap { $0.split(separator: " ").dropLast(6).last.map { String($0.dropLast()) } }
        }
        try setup.veth.dropCarrier()
        #expect(waitUntil(timeout: 10) { lastHeld() == "notReachable" }, "\(setup.daemon.child.stderr)")
        try setup.veth.restoreCarrier()
        #expect(waitUntil(timeout: 10) { lastHeld() == "ethernet" }, "\(setup.daemon.child.stderr)")
        try setup.veth.dropCarrier()
        #expect(waitUntil(timeout: 10) { lastHeld() == "notReachable" }, "\(setup.daemon.child.stderr)")
        #expect(events(setup.monitor).count == 2, "nothing published while the simulation is on")
        let during = try setup.daemon.reachctl(["status", "--json"])
        #expect(during.stdout.contains("\"simulated\":true") && during.stdout.contains("\"status\":\"wifi\""))

        #expect(try setup.daemon.reachctl(["simulate", "--reset"]).status == 0)
        let ended = waitForEvents(setup.monitor, count: 3)
        let back = try #require(ended.count == 3 ? ended.last : nil)
        #expect(back.sequence == start.sequence + 1, "one event back, not a replay")
        #expect(back.previous?.status == .wifi && back.previous?.simulated == true)
        #expect(back.current.status == .notReachable && !back.current.reachable && back.current.connectivity == Connectivity.none)
        #expect(!back.current.simulated)

        // Real events flow again, numbered on.
        try setup.veth.restoreCarrier()
        // The carrier's return is the next event. On a loaded machine the kernel's later word on
        // the link (its operational state settling) can come in a read of its own and make one
        // more event; any such follows, numbered on.
        let next = waitForEvents(setup.monitor, count: 4)
        #expect(next.count >= 4)
        let returned = next.count >= 4 ? next[3] : nil
        #expect(returned?.sequence == back.sequence + 1)
        #expect(returned?.reason.code == .carrierGained && returned?.current.status == .ethernet)
        #expect(next.dropFirst(3).map(\.sequence) == Array((back.sequence + 1)...(back.sequence + next.count - 3)),
                "\(next.dropFirst(3).map { ($0.sequence, $0.reason.code, $0.changes) })")
    }

    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func scriptPlaysItsLinesInOrder() throws {
        let setup = try SimulationSetup(tag: "ss")
        defer { setup.destroy() }
        let script = setup.daemon.directory + "/train.txt"
        try "# a train ride\nwwan2G 1\nwifi portal 1   # the station\nnotReachable 1\n".write(toFile: script, atomically: true, encoding: .utf8)
        let result = try setup.daemon.reachctl(["simulate", "--script", script], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("line 2:") && result.stdout.contains("line 4:") && result.stdout.contains("script done"))
        let all = waitForEvents(setup.monitor, count: 5)
        #expect(all.count == 5, "\(setup.monitor.lines)")
        guard all.count == 5 else { return }
        #expect(all.map(\.current.status) == [.ethernet, .wwan2G, .wifi, .notReachable, .ethernet])
        #expect(all.map(\.current.simulated) == [false, true, true, true, false])
        #expect(all[2].current.connectivity == .portal && all[3].current.connectivity == Connectivity.none)
        let sequences = all.map(\.sequence)
        #expect(sequences == Array(sequences[0]...(sequences[0] + 4)))
        #expect(all.dropFirst().allSatisfy { $0.reason.code == .simulation && $0.current.isConsistent })
    }

    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"), .requires(.pythonVarlink))
    func badInputIsRefusedAndChangesNothing() throws {
        try Requirement.pythonVarlink.check()
        let setup = try SimulationSetup(tag: "sb")
        defer { setup.destroy() }
        let unknown = try setup.daemon.reachctl(["simulate", "wwan6G"])
        #expect(unknown.status == 2 && unknown.stderr.contains("wwan6G"), "\(unknown.stderr)")
        let negative = try setup.daemon.reachctl(["simulate", "wifi", "--for", "-1"])
        #expect(negative.status == 2 && negative.stderr.contains("--for"), "\(negative.stderr)")
        let script = setup.daemon.directory + "/bad.txt"
        try "wifi 1\nwifi full\n".write(toFile: script, atomically: true, encoding: .utf8)
        let bad = try setup.daemon.reachctl(["simulate", "--script", script])
        #expect(bad.status == 2 && bad.stderr.contains("line 2:"), "\(bad.stderr)")
        let missing = try setup.daemon.reachctl(["simulate", "--script", setup.daemon.directory + "/none.txt"])
        #expect(missing.status == 2 && missing.stderr.contains("none.txt"), "\(missing.stderr)")

        // Straight to the daemon: InvalidParameter naming the parameter.
        for (parameters, parameter) in [(#"{"status": "wwan6G"}"#, "status"), (#"{"status": "wifi", "seconds": -4}"#, "seconds"),
                                        (#"{"status": "wifi", "connectivity": "none"}"#, "connectivity"),
                                        (#"{"reset": true, "status": "wifi"}"#, "status"), (#"{}"#, "status")] {
            let python = try Child(Binaries.python, [Binaries.packageRoot + "/Tests/python/varlink_simulate.py", setup.daemon.socketPath, parameters])
            #expect(python.wait(timeout: 15) == 1, "\(python.stderr)")
            let reply = objects(python).first
            #expect(reply?["error"] == .string("org.varlink.service.InvalidParameter"), "\(parameters): \(python.lines)")
            #expect(reply?["parameters"]?.objectValue?["parameter"] == .string(parameter), "\(parameters): \(python.lines)")
        }
        // Nothing was published, the subscriber is still there, the daemon still serves.
        #expect(events(setup.monitor).count == 1)
        #expect(setup.monitor.isRunning && setup.daemon.child.isRunning)
        #expect(try setup.daemon.reachctl(["simulate", "wifi", "--for", "600"]).status == 0)
        #expect(waitForEvents(setup.monitor, count: 2).count == 2)
        #expect(try setup.daemon.reachctl(["simulate", "--reset"]).status == 0)
    }

    /// python's varlink (which checks replies against the description) subscribes and sees
    /// the simulation, and a held python connection ends it by hanging up.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"), .requires(.pythonVarlink))
    func pythonVarlinkSubscriberSeesSimulatedEvents() throws {
        try Requirement.pythonVarlink.check()
        let setup = try SimulationSetup(tag: "sp")
        defer { setup.destroy() }
        let subscriber = try Child(Binaries.python, [Binaries.pythonClient, setup.daemon.socketPath, "3"])
        #expect(waitUntil(timeout: 15) { objects(subscriber).contains { $0["event"] != nil } }, "\(subscriber.stderr)")
        let holder = try Child(Binaries.python, [Binaries.packageRoot + "/Tests/python/varlink_simulate.py", setup.daemon.socketPath,
                                                 #"{"status": "wwan3G", "accessTechnology": "hspa-plus", "whileConnected": true}"#, "--hold"])
        #expect(waitUntil(timeout: 15) { !objects(holder).isEmpty }, "\(holder.stderr)")
        #expect(objects(holder).first?["status"]?.objectValue?["simulated"] == .bool(true))
        #expect(waitForEvents(setup.monitor, count: 2).count == 2)
        holder.signal(SIGTERM)
        holder.wait(timeout: 5)
        #expect(subscriber.wait(timeout: 15) == 0, "\(subscriber.stderr)")
        let received = objects(subscriber).compactMap { $0["event"]?.objectValue }
        #expect(received.count == 3)
        guard received.count == 3 else { return }
        let simulated = received[1]["current"]?.objectValue
        #expect(simulated?["simulated"] == .bool(true) && simulated?["status"] == .string("wwan3G"))
        #expect(simulated?["cellular"]?.objectValue?["accessTechnology"] == .string("hspa-plus"))
        #expect(received[1]["reason"]?.objectValue?["code"] == .string("simulation"))
        #expect(received[2]["current"]?.objectValue?["simulated"] == .bool(false))
        #expect(received[2]["sequence"]?.intValue == (received[1]["sequence"]?.intValue ?? 0) + 1)
    }
}
}

extension SystemTests {
/// Who may simulate: root, and members of `[Simulation] Group=`; callers run as other users.
@Suite(.serialized) struct SimulationPermissionIntegrationTests {
    /// A group and a user in it, made for the test (removed after).
    final class TemporaryAccount: @unchecked Sendable {
        let group: String
        let user: String
        init() throws {
            let tag = "rs\(getpid() % 100_000)"
            group = tag + "g"; user = tag + "u"
            _ = try? sh("userdel \(user) 2>/dev/null; groupdel \(group) 2>/dev/null", check: false)
            _ = try sh("groupadd \(group)")
            _ = try sh("useradd -M -N -g nogroup -G \(group) -s /usr/sbin/nologin \(user)")
        }
        func destroy() { _ = try? sh("userdel \(user); groupdel \(group)", check: false) }
    }

    /// Runs the python Simulate helper as `user` (setpriv: real and effective ids, its groups).
    static func simulate(as user: String, groups: String, socket: String, _ parameters: String) throws -> [String: JSONValue]? {
        let child = try Child("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=nogroup", groups,
                                                   Binaries.python, Binaries.packageRoot + "/Tests/python/varlink_simulate.py",
                                                   socket, parameters])
        child.wait(timeout: 15)
        return objects(child).first ?? ["stderr": .string(child.stderr)]
    }

    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces, users, setpriv"), .requires(.pythonVarlink))
    func unprivilegedRefusedGroupMemberAllowed() throws {
        try Requirement.pythonVarlink.check()
        let account = try TemporaryAccount()
        defer { account.destroy() }
        let setup = try SimulationSetup(tag: "sq", config: DaemonUnderTest.defaultConfig + "[Simulation]\nGroup=\(account.group)\n")
        defer { setup.destroy() }
        // The other users must reach the socket (its directory is mkdtemp's 0700).
        chmod(setup.daemon.directory, 0o755)
        // Someone else must be able to run the venv's python.
        let nobody = try Self.simulate(as: "nobody", groups: "--clear-groups", socket: setup.daemon.socketPath, #"{"status": "wifi"}"#)
        #expect(nobody?["error"] == .string("io.reachd.Reachability.PermissionDenied"), "\(String(describing: nobody))")
        // Refused before it looked at the parameters, and nothing changed.
        let nobodyBad = try Self.simulate(as: "nobody", groups: "--clear-groups", socket: setup.daemon.socketPath, #"{"status": "bogus"}"#)
        #expect(nobodyBad?["error"] == .string("io.reachd.Reachability.PermissionDenied"))
        #expect(events(setup.monitor).count == 1)
        #expect(setup.daemon.child.stderr.contains("Simulate refused: uid 65534"))

        // The member: its supplementary group comes from the group database (getgrouplist), not
        // from what the process carries (cleared here).
        let member = try Self.simulate(as: account.user, groups: "--clear-groups", socket: setup.daemon.socketPath,
                                       #"{"status": "wwan2G", "seconds": 600}"#)
        #expect(member?["status"]?.objectValue?["simulated"] == .bool(true), "\(String(describing: member))")
        let all = waitForEvents(setup.monitor, count: 2)
        #expect(all.last?.current.status == .wwan2G && all.last?.current.simulated == true)
        // reachctl as nobody: a clear message, its own exit status.
        let denied = try run("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", Binaries.reachctl,
                                                  "simulate", "--reset", "--socket", setup.daemon.socketPath])
        #expect(denied.status == 77 && denied.stderr.contains("permission denied"), "\(denied)")
        #expect(try setup.daemon.reachctl(["status"]).stdout.contains("simulated"))
    }
}
}

extension SystemTests {
/// systemd's `STATUS=` says when a simulation is on (a python listener stands in for systemd).
@Suite struct SimulationNotifyTests {
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func systemdStatusSaysSimulated() throws {
        let host = try TestNamespace(tag: "sn"), uplink = try TestNamespace(tag: "snu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let reachd = try DaemonUnderTest(namespace: host, launch: .init(logLevel: nil, notify: true))
        defer { reachd.stop() }
        let listener = try #require(reachd.notifications), daemon = reachd.child, socketPath = reachd.socketPath
        #expect(waitUntil(timeout: 15) { listener.lines.contains { $0.contains("READY=1") && $0.contains("STATUS=ethernet via eth0") } },
                "\(listener.lines) \(daemon.stderr)")

        let simulate = try run(Binaries.reachctl, ["simulate", "wwan2G", "--connectivity", "portal", "--for", "600", "--socket", socketPath])
        #expect(simulate.status == 0, "\(simulate.stderr)")
        #expect(waitUntil(timeout: 10) { listener.lines.contains("STATUS=simulated: wwan2G via eth0, internet captive portal") },
                "\(listener.lines)")
        #expect(try run(Binaries.reachctl, ["simulate", "--reset", "--socket", socketPath]).status == 0)
        #expect(waitUntil(timeout: 10) { listener.lines.last?.hasPrefix("STATUS=ethernet via eth0") == true }, "\(listener.lines)")
    }
}
}
