import Foundation
import ReachabilityCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

// The GIO module (gio/, `make gio`) in real GLib apps: Debian's python3-gi with
// GIO_EXTRA_MODULES, and a real xdg-desktop-portal on a private session bus, against a real
// reachd in a namespace (or a fake one that hangs).

enum GIO {
    /// `make gio` (a prerequisite of `make build` and `build-tests`) builds it here.
    static var moduleDirectory: String { Paths.packageRoot + "/.build/gio" }
    static var module: String { moduleDirectory + "/libgioreachd.so" }
    /// Debian's python3: python3-gi lives in its site-packages.
    static let python = "/usr/bin/python3"
    static var app: String { Paths.file("Tests/python/gio_monitor.py") }
    static var fakeReachd: String { Paths.file("Tests/python/fake_reachd.py") }
    static var portalClient: String { Paths.file("Tests/python/portal_client.py") }
    static let portal = "/usr/libexec/xdg-desktop-portal"
    /// G_IO_ERROR_HOST_UNREACHABLE.
    static let hostUnreachable = 37

    static let pythonGI = Requirement(name: "python3-gi", install: "apt-get install -y python3-gi gir1.2-glib-2.0 (scripts/deps.sh)") {
        (try? sh("\(python) -c 'import gi; gi.require_version(\"Gio\", \"2.0\"); from gi.repository import Gio'", check: false).status) == 0
    }
    static let desktopPortal = Requirement.executable("xdg-desktop-portal", at: [portal],
                                                      install: "apt-get install -y xdg-desktop-portal (scripts/deps.sh)")

    static func checkModule() throws {
        guard FileManager.default.fileExists(atPath: module) else {
            throw SetupError("\(module) is missing: run `make gio`")
        }
    }

    /// A GLib app's environment: the test process's, without anything that would choose the
    /// monitor or the socket for it, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter {
            !["GIO_USE_NETWORK_MONITOR", "GIO_EXTRA_MODULES", "GIO_MODULE_DIR", "REACHD_SOCKET",
              "DBUS_SESSION_BUS_ADDRESS", "G_MESSAGES_DEBUG"].contains($0.key)
        }
        environment.merge(extra) { $1 }
        return environment
    }

    /// The app (gio_monitor.py) in `namespace` (nil: this one), with the module and `socket`.
    /// `debug`: the module's debug log (G_MESSAGES_DEBUG; GLib writes it to stdout).
    static func startApp(in namespace: TestNamespace?, socket: String, module: Bool = true, debug: Bool = false,
                         _ arguments: [String] = []) throws -> Child {
        var extra = ["REACHD_SOCKET": socket]
        if module { extra["GIO_EXTRA_MODULES"] = moduleDirectory }
        if debug { extra["G_MESSAGES_DEBUG"] = "GLib-GIO-reachd" }
        let command = [python, app] + arguments
        if let namespace {
            return try Child(ipCommand, ["netns", "exec", namespace.name] + command, environment: environment(extra))
        }
        return try Child(command[0], Array(command.dropFirst()), environment: environment(extra))
    }
}

/// The JSON objects a helper printed so far.
private func objects(_ child: Child) -> [[String: JSONValue]] {
    child.lines.compactMap { (try? JSONValue(parsing: Data($0.utf8)))?.objectValue }
}

/// The calls a fake reachd received: method and parameters.
private func calls(_ fake: Child) -> [(method: String, parameters: [String: JSONValue])] {
    objects(fake).compactMap { object in
        guard let method = object["call"]?.stringValue else { return nil }
        return (method, object["parameters"]?.objectValue ?? [:])
    }
}

private func events(_ child: Child, _ name: String) -> [[String: JSONValue]] {
    objects(child).filter { $0["event"]?.stringValue == name }
}

/// What an app sees: available, connectivity, metered.
private struct Seen: Equatable, CustomStringConvertible {
    let available: Bool
    let connectivity: String
    let metered: Bool
    init(_ available: Bool, _ connectivity: String, _ metered: Bool) {
        self.available = available; self.connectivity = connectivity; self.metered = metered
    }
    init?(_ object: [String: JSONValue]) {
        guard let available = object["available"]?.boolValue, let connectivity = object["connectivity"]?.stringValue,
              let metered = object["metered"]?.boolValue else { return nil }
        self.init(available, connectivity, metered)
    }
    var description: String { "(\(available ? "available" : "unavailable"), \(connectivity)\(metered ? ", metered" : ""))" }
}

private func number(_ value: JSONValue?) -> Double? {
    switch value {
    case .int(let i): return Double(i)
    case .double(let d): return d
    default: return nil
    }
}

/// A reachd (check off) in a namespace with a veth uplink, 192.0.2.0/24 unreachable.
private final class GIOSetup: @unchecked Sendable {
    let host: TestNamespace
    let uplink: TestNamespace
    let veth: VethUplink
    let daemon: DaemonUnderTest

    init(tag: String) throws {
        try Requirement.python3.check()
        try GIO.pythonGI.check()
        try GIO.checkModule()
        host = try TestNamespace(tag: tag)
        uplink = try TestNamespace(tag: tag + "u")
        veth = try VethUplink(host: host, uplink: uplink)
        try host.ip("route add unreachable 192.0.2.0/24")
        daemon = try DaemonUnderTest(namespace: host)
        // The real path first (IPv6's link-local address settles in an event of its own), so
        // that what the app sees next is what the test does.
        let linkLocal = try veth.settledLinkLocal()
        _ = waitUntil(timeout: 10) {
            guard let status = try? daemon.reachctl(["status", "--json"]).stdout else { return false }
            return status.contains("\"reachable\":true") && linkLocal.map { status.contains($0) } ?? true
        }
    }

    /// reachd's Simulate through `reachctl simulate ARGUMENTS` (as root).
    func simulate(_ arguments: String...) throws {
        let result = try daemon.reachctl(["simulate"] + arguments)
        guard result.status == 0 else { throw SetupError("reachctl simulate \(arguments): \(result.stdout) \(result.stderr)") }
    }

    func destroy() {
        daemon.stop()
        host.destroy(); uplink.destroy()
    }
}

extension ServiceSystemTests {
@Suite(.serialized) struct GIOModuleTests {
    /// Every state of the mapping, through the getters, notify and network-changed of
    /// g_network_monitor_get_default() in a python3-gi app; can_reach through reachd's Check.
    @Test(.needsRoot("starts reachd in a namespace"), .requires(.python3))
    func defaultMonitorFollowsEveryStateOfTheMapping() throws {
        let setup = try GIOSetup(tag: "gm")
        defer { setup.destroy() }
        // Seven of each: the asynchronous calls all start at once, more than reachd allows one
        // user in flight (it answers Busy; the module asks again when reachd says).
        let hosts = Array(repeating: ["--reach", "10.77.0.1", "--reach", "192.0.2.1:443"], count: 7).flatMap { $0 }
        let app = try GIO.startApp(in: setup.host, socket: setup.daemon.socketPath, hosts)
        defer { app.signal(SIGTERM); app.wait(timeout: 5) }
        #expect(waitUntil(timeout: 30) { events(app, "reach").count == 28 }, "\(app.lines) \(app.stderr)")
        let ready = try #require(events(app, "ready").first, "\(app.stderr)")
        #expect(ready["type"]?.stringValue == "GNetworkMonitorReachd")
        #expect(Seen(ready) == Seen(true, "full", false), "connectivity unknown (check off) is FULL")

        // can_reach, sync and async: a routed address yes; an unreachable route no, with an error.
        for reach in events(app, "reach") {
            let host = reach["host"]?.stringValue
            if host == "10.77.0.1" {
                #expect(reach["ok"]?.boolValue == true, "\(reach)")
            } else {
                #expect(host == "192.0.2.1")
                #expect(reach["ok"]?.boolValue == false, "\(reach)")
                let error = reach["error"]?.objectValue
                #expect(error?["domain"]?.stringValue == "g-io-error-quark" && error?["code"]?.intValue == GIO.hostUnreachable, "\(reach)")
            }
        }

        var expected: [Seen] = []
        func step(_ what: String, _ seen: Seen, _ action: () throws -> Void) throws {
            try action()
            expected.append(seen)
            let arrived = waitUntil(timeout: 15) { events(app, "changed").count >= expected.count }
            #expect(arrived, "\(what): no network-changed; \(app.lines)")
            #expect(events(app, "changed").compactMap(Seen.init) == expected, "\(what)")
        }
        // reachd's Simulate plays each state (a new one replaces the one before).
        try step("portal", Seen(true, "portal", false)) { try setup.simulate("ethernet", "--connectivity", "portal", "--for", "600") }
        try step("limited, expensive", Seen(true, "limited", true)) {
            try setup.simulate("ethernet", "--connectivity", "limited", "--expensive", "--for", "600")
        }
        try step("full", Seen(true, "full", false)) { try setup.simulate("ethernet", "--connectivity", "full", "--for", "600") }
        try step("wwan2G, expensive", Seen(true, "full", true)) {
            try setup.simulate("wwan2G", "--connectivity", "full", "--expensive", "--for", "600")
        }
        try step("not reachable", Seen(false, "local", false)) { try setup.simulate("notReachable", "--for", "600") }
        try step("reset: the real ethernet, connectivity unknown", Seen(true, "full", false)) { try setup.simulate("--reset") }
        // Real carrier changes of the veth.
        try step("carrier lost", Seen(false, "local", false)) { try setup.veth.dropCarrier() }
        try step("carrier back", Seen(true, "full", false)) { try setup.veth.restoreCarrier() }
        // A path change (a second uplink with a better metric becomes primary): network-changed
        // with nothing else different, as GLib's own monitors signal a new default route.
        let second = try TestNamespace(tag: "gm2")
        defer { second.destroy() }
        try step("new primary", Seen(true, "full", false)) {
            _ = try VethUplink(host: setup.host, uplink: second, inner: "eth1", outer: "up1", subnet: 78, metric: 50)
        }
        // The marker: one more change, so that a stray or doubled signal before it would show.
        try step("marker", Seen(true, "portal", false)) { try setup.simulate("ethernet", "--connectivity", "portal", "--for", "600") }

        // On the app's main context, where the monitor was made.
        #expect(events(app, "changed").allSatisfy { $0["thread"]?.stringValue == "MainThread" })
        // network-changed's argument is network-available; before each, a notify for exactly
        // the properties that changed (the path change: none).
        var previous = Seen(ready)!
        var notified: Set<String> = []
        for object in objects(app) {
            switch object["event"]?.stringValue {
            case "notify": notified.insert(object["property"]?.stringValue ?? "?")
            case "changed":
                let seen = Seen(object)!
                #expect(object["argument"]?.boolValue == seen.available)
                var changed: Set<String> = []
                if seen.available != previous.available { changed.insert("network-available") }
                if seen.connectivity != previous.connectivity { changed.insert("connectivity") }
                if seen.metered != previous.metered { changed.insert("network-metered") }
                #expect(notified == changed, "\(previous) → \(seen)")
                previous = seen
                notified = []
            default: break
            }
        }
    }

    /// A monitor made in a thread whose thread-default main context is its own signals there,
    /// not on the main thread's context (which runs too).
    @Test(.needsRoot("starts reachd in a namespace"), .requires(.python3))
    func signalsComeOnTheContextWhereTheMonitorWasMade() throws {
        let setup = try GIOSetup(tag: "gt")
        defer { setup.destroy() }
        let app = try GIO.startApp(in: setup.host, socket: setup.daemon.socketPath, ["--in-thread"])
        defer { app.signal(SIGKILL); app.wait(timeout: 5) }
        #expect(waitUntil(timeout: 15) { !events(app, "ready").isEmpty }, "\(app.stderr)")
        #expect(events(app, "ready").first?["type"]?.stringValue == "GNetworkMonitorReachd")
        try setup.simulate("ethernet", "--connectivity", "portal", "--for", "600")
        #expect(waitUntil(timeout: 15) { !events(app, "changed").isEmpty }, "\(app.lines) \(app.stderr)")
        let changed = try #require(events(app, "changed").first)
        #expect(Seen(changed) == Seen(true, "portal", false))
        #expect(changed["thread"]?.stringValue == "monitor", "\(changed)")
        #expect(events(app, "notify").allSatisfy { $0["thread"]?.stringValue == "monitor" })
    }

    /// No reachd: GLib's own monitor, and the module's init costs at most its 100 ms. A reachd
    /// that accepts and never answers: the same.
    @Test(.needsRoot("starts fake reachd servers"), .requires(.python3))
    func fallsBackFastWithoutReachd() throws {
        try GIO.pythonGI.check()
        try GIO.checkModule()
        let directory = try TemporaryDirectory()
        // Without the module at all: the time GLib takes by itself.
        let baseline = try GIO.startApp(in: nil, socket: directory.path + "/none", module: false, ["--exit-after-ready"])
        #expect(baseline.wait(timeout: 30) == 0, "\(baseline.stderr)")
        let plain = try #require(events(baseline, "ready").first, "\(baseline.stderr)")

        // No socket.
        let absent = try GIO.startApp(in: nil, socket: directory.path + "/none", ["--exit-after-ready"])
        #expect(absent.wait(timeout: 30) == 0, "\(absent.stderr)")
        let noSocket = try #require(events(absent, "ready").first, "\(absent.stderr)")
        #expect(noSocket["type"]?.stringValue == plain["type"]?.stringValue)
        #expect(noSocket["type"]?.stringValue != "GNetworkMonitorReachd")

        // A socket whose server never answers.
        let socket = directory.path + "/silent"
        let fake = try Child(GIO.python, [GIO.fakeReachd, socket])
        defer { fake.signal(SIGKILL); fake.wait(timeout: 5) }
        #expect(waitUntil(timeout: 10) { fake.lines.contains(#"{"ready": true}"#) })
        let hung = try GIO.startApp(in: nil, socket: socket, ["--exit-after-ready"])
        #expect(hung.wait(timeout: 30) == 0, "\(hung.stderr)")
        let silent = try #require(events(hung, "ready").first, "\(hung.stderr)")
        #expect(silent["type"]?.stringValue == plain["type"]?.stringValue)
        #expect(calls(fake).map(\.method) == ["io.reachd.Reachability.Subscribe"], "the module asked: \(fake.lines)")

        let base = number(plain["getDefaultMs"]) ?? 0
        let absentMs = number(noSocket["getDefaultMs"]) ?? .infinity
        let silentMs = number(silent["getDefaultMs"]) ?? .infinity
        print("GIOModuleTests: get_default() \(base) ms without the module, \(absentMs) ms with it and no socket, \(silentMs) ms with a silent reachd")
        // The module gives up after 90 ms; what is above that is loading and a loaded machine.
        #expect(absentMs - base < 100, "no socket: \(absentMs) ms against \(base) ms")
        #expect(silentMs - base < 250, "silent reachd: \(silentMs) ms against \(base) ms")
    }

    /// A reachd that answers the subscription once and then hangs: the app's monitor is
    /// reachd's, a can_reach_async stays pending, and the main loop keeps ticking meanwhile.
    @Test(.needsRoot("starts fake reachd servers"), .requires(.python3))
    func aHungReachdCostsTheMainLoopNothing() throws {
        try GIO.pythonGI.check()
        try GIO.checkModule()
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/hung"
        let fake = try Child(GIO.python, [GIO.fakeReachd, socket, "--initial-only"])
        defer { fake.signal(SIGKILL); fake.wait(timeout: 5) }
        #expect(waitUntil(timeout: 10) { fake.lines.contains(#"{"ready": true}"#) })
        let app = try GIO.startApp(in: nil, socket: socket, ["--reach-on-usr1", "10.1.2.3"])
        defer { app.signal(SIGKILL); app.wait(timeout: 5) }
        #expect(waitUntil(timeout: 15) { !events(app, "ready").isEmpty }, "\(app.stderr)")
        #expect(events(app, "ready").first?["type"]?.stringValue == "GNetworkMonitorReachd")

        app.signal(SIGUSR1)
        #expect(waitUntil(timeout: 10) { calls(fake).contains { $0.method == "io.reachd.Reachability.Check" } }, "\(fake.lines)")
        let started = try #require(events(app, "reachStarted").first)
        let startTicks = started["ticks"]?.intValue ?? 0
        // The loop ticks on while the Check is unanswered (and the subscription silent).
        let ticked = waitUntil(timeout: 10) {
            app.signal(SIGUSR2)
            return (events(app, "state").last?["ticks"]?.intValue ?? 0) >= startTicks + 20
        }
        #expect(ticked, "\(app.lines)")
        #expect(events(app, "reachDone").isEmpty, "the Check is still unanswered")

        // reachd goes away: the pending call ends, answered from the last status.
        fake.signal(SIGKILL)
        #expect(waitUntil(timeout: 10) { !events(app, "reachDone").isEmpty }, "\(app.lines)")
        #expect(events(app, "reachDone").first?["ok"]?.boolValue == true)
        app.signal(SIGTERM)
        #expect(app.wait(timeout: 10) == 0, "\(app.stderr)")
        let exit = try #require(events(app, "exit").first)
        let maxGap = number(exit["maxGapMs"]) ?? .infinity
        print("GIOModuleTests: longest main-loop stall with a hung reachd: \(maxGap) ms over \(exit["ticks"]?.intValue ?? 0) ticks")
        #expect(maxGap < 2000, "a generous bound: the loop was never held for long")
    }

    /// After the connection is lost the module subscribes again after the last sequence number
    /// it saw (reachd replays what it missed), with the same filter.
    @Test(.needsRoot("starts fake reachd servers"), .requires(.python3))
    func resubscribesAfterTheLastSequenceNumber() throws {
        try GIO.pythonGI.check()
        try GIO.checkModule()
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/resume"
        var fake = try Child(GIO.python, [GIO.fakeReachd, socket, "--initial-only"])
        #expect(waitUntil(timeout: 10) { fake.lines.contains(#"{"ready": true}"#) })
        let app = try GIO.startApp(in: nil, socket: socket)
        defer { app.signal(SIGKILL); app.wait(timeout: 5) }
        #expect(waitUntil(timeout: 15) { !events(app, "ready").isEmpty }, "\(app.stderr)")
        #expect(events(app, "ready").first?["type"]?.stringValue == "GNetworkMonitorReachd")
        let first = try #require(calls(fake).first)
        #expect(first.method == "io.reachd.Reachability.Subscribe" && first.parameters["after"] == nil)
        let filter = first.parameters["changes"]?.arrayValue?.compactMap(\.stringValue)
        #expect(filter == ["connectivity", "expensive", "gateways", "primary", "reachable", "vpn"])

        fake.signal(SIGKILL)
        fake.wait(timeout: 5)
        fake = try Child(GIO.python, [GIO.fakeReachd, socket, "--initial-only"])
        defer { fake.signal(SIGKILL); fake.wait(timeout: 5) }
        #expect(waitUntil(timeout: 20) { !calls(fake).isEmpty }, "\(fake.lines)")
        let again = try #require(calls(fake).first)
        #expect(again.method == "io.reachd.Reachability.Subscribe")
        #expect(again.parameters["after"]?.intValue == 41, "the fake's initial event is number 41: \(again.parameters)")
        #expect(again.parameters["changes"]?.arrayValue?.compactMap(\.stringValue) == filter)
        #expect(app.isRunning)
    }

    /// reachd restarts under a running app: the last answers stay meanwhile, the app goes on,
    /// and the next change after the restart arrives.
    @Test(.needsRoot("starts reachd in a namespace"), .requires(.python3))
    func reachdRestartUnderARunningApp() throws {
        let setup = try GIOSetup(tag: "gr")
        defer { setup.destroy() }
        let app = try GIO.startApp(in: setup.host, socket: setup.daemon.socketPath, debug: true)
        defer { app.signal(SIGKILL); app.wait(timeout: 5) }
        #expect(waitUntil(timeout: 15) { !events(app, "ready").isEmpty }, "\(app.stderr)")
        #expect(events(app, "ready").first?["type"]?.stringValue == "GNetworkMonitorReachd")

        setup.daemon.stop()
        // Stale but kept: the app still sees the last status while reachd is away.
        #expect(waitUntil(timeout: 10) { app.signal(SIGUSR2); return !events(app, "state").isEmpty })
        #expect(events(app, "state").first.flatMap(Seen.init) == Seen(true, "full", false))
        #expect(app.isRunning)

        try setup.daemon.start()
        try setup.simulate("ethernet", "--connectivity", "portal", "--expensive", "--for", "600")
        #expect(waitUntil(timeout: 20) { !events(app, "changed").isEmpty }, "\(app.lines) \(app.stderr)")
        #expect(events(app, "changed").compactMap(Seen.init) == [Seen(true, "portal", true)])
        app.signal(SIGTERM)
        #expect(app.wait(timeout: 10) == 0, "\(app.stderr)")

        // While reachd was away, the module tried again after 100 ms, then twice as long each
        // time (at most 5 s): no busy loop. Then it subscribed again, after its last event.
        // (GLib writes debug messages to stdout.)
        let log = app.lines + app.stderr.split(separator: "\n").map(String.init)
        let delays = log.compactMap { line -> Int? in
            guard let range = line.range(of: "trying again in ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(!delays.isEmpty && delays == Array([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000].prefix(delays.count)),
                "\(delays)")
        #expect(log.contains { $0.contains("reachd: subscribed again (after ") }, "\(log)")
    }

    /// A real xdg-desktop-portal on a private session bus, with the module: its NetworkMonitor
    /// reports reachd's status and signals `changed` when reachd's changes.
    @Test(.needsRoot("starts reachd in a namespace"), .requires(.python3, .dbusDaemon))
    func desktopPortalReportsReachdsStatus() throws {
        try GIO.desktopPortal.check()
        let setup = try GIOSetup(tag: "gp")
        defer { setup.destroy() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        // As root, without a display or a desktop: the portal needs only its bus.
        let portal = try Child(GIO.portal, ["--verbose"],
                               environment: GIO.environment(["DBUS_SESSION_BUS_ADDRESS": bus.address,
                                                             "GIO_EXTRA_MODULES": GIO.moduleDirectory,
                                                             "REACHD_SOCKET": setup.daemon.socketPath]))
        // SIGKILL: children of a test thread may have SIGTERM blocked.
        defer { portal.signal(SIGKILL); portal.wait(timeout: 5) }
        let client = try Child(GIO.python, [GIO.portalClient, bus.address], environment: GIO.environment([:]))
        defer { client.signal(SIGKILL); client.wait(timeout: 5) }
        #expect(waitUntil(timeout: 20) { !events(client, "status").isEmpty }, "\(client.stderr) \(portal.stderr)")
        let status = try #require(events(client, "status").first)
        #expect(status["available"]?.boolValue == true && status["metered"]?.boolValue == false)
        #expect(status["connectivity"]?.intValue == 4, "G_NETWORK_CONNECTIVITY_FULL: \(status)")

        // GLib's own monitors know neither a portal nor metered: only reachd's can say this.
        try setup.simulate("ethernet", "--connectivity", "portal", "--expensive", "--for", "600")
        #expect(waitUntil(timeout: 15) { !events(client, "changed").isEmpty }, "\(client.lines) \(portal.stderr)")
        let changed = try #require(events(client, "changed").first)
        #expect(changed["connectivity"]?.intValue == 3, "G_NETWORK_CONNECTIVITY_PORTAL: \(changed)")
        #expect(changed["metered"]?.boolValue == true && changed["available"]?.boolValue == true)
    }
}
}
