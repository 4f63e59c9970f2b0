import Foundation
import ReachabilityClient
import ReachabilityCore
@testable import reachd_dispatcher
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The environment a dispatcher script gets, exactly: the names docs/acting-on-changes.md and
/// reachd-dispatcher(8) document.
let documentedScriptEnvironment: Set<String> = [
    "LANG", "PATH", "REACHD_CHANGES", "REACHD_COALESCED", "REACHD_CONNECTIVITY", "REACHD_EFFECTIVE_TYPE", "REACHD_EVENT",
    "REACHD_EXPENSIVE", "REACHD_LINK_QUALITY",
    "REACHD_GENERATION", "REACHD_INTERFACE", "REACHD_INTERFACE_KIND", "REACHD_PORTAL_URL", "REACHD_PREVIOUS_CONNECTIVITY",
    "REACHD_PREVIOUS_INTERFACE", "REACHD_PREVIOUS_REACHABLE", "REACHD_PREVIOUS_STATUS", "REACHD_REACHABLE", "REACHD_REASON",
    "REACHD_REASON_INTERFACE", "REACHD_SCRIPT", "REACHD_SEQUENCE", "REACHD_SIMULATED", "REACHD_STALL", "REACHD_STATUS", "REACHD_VPN",
    "REACHD_WIFI_BAND", "REACHD_WIFI_BARS", "REACHD_WIFI_BSSID", "REACHD_WIFI_SIGNAL_DBM", "REACHD_WIFI_SSID",
]

/// reachd-dispatcher as built, following a `DaemonUnderTest`: scripts in `scripts/` (root's, in
/// a directory of the test's own), its progress in `state/`, and a `systemctl` that only writes
/// down what it was asked (`units.log`). Every script made by `recorder(_:)` leaves one run in
/// `runs/`: the exact bytes of its environment (`/proc/self/environ`) and its stdin, each
/// renamed into place once whole (a run is listed by its `.json`, which comes last).
final class DispatcherUnderTest: @unchecked Sendable {
    let directory: TemporaryDirectory
    let socketPath: String
    var path: String { directory.path }
    var scripts: String { path + "/scripts" }
    private(set) var child: Child?
    private(set) var stderrOfEarlierRuns = ""

    /// One run of one script, as it saw it.
    struct Run {
        var script: String
        var environmentBytes: [UInt8]
        var inputBytes: [UInt8]
        var environment: [String: String] {
            var result: [String: String] = [:]
            for entry in environmentBytes.split(separator: 0) {
                let text = String(decoding: entry, as: UTF8.self)
                guard let equals = text.firstIndex(of: "=") else { continue }
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            return result
        }
        func event() throws -> ReachabilityEvent { try WireJSON.decoder().decode(ReachabilityEvent.self, from: Data(inputBytes)) }
    }

    init(socketPath: String, config: String) throws {
        directory = try TemporaryDirectory()
        self.socketPath = socketPath
        try sh("chmod 0755 '\(directory.path)' && mkdir -m 0755 '\(directory.path)/scripts' '\(directory.path)/runs'")
        try config.write(toFile: path + "/dispatcher.conf", atomically: true, encoding: .utf8)
        try install("systemctl", "#!/bin/sh\necho \"$*\" >> '\(path)/units.log'\n", in: path)
    }

    /// A shell script for the recorder: writes the run, then `extra`.
    /// (Each record appears whole, by rename: the test reads runs while scripts still write.)
    func recorder(_ extra: String = "") -> String {
        """
        #!/bin/sh
        n=$(( $(cat '\(path)/count' 2>/dev/null || echo 0) + 1 ))
        echo $n > '\(path)/count'
        out='\(path)/runs/'$(printf %05d $n)-"$REACHD_SCRIPT"
        cat /proc/$$/environ > "$out.env.part"
        cat > "$out.json.part"
        mv "$out.env.part" "$out.env"
        mv "$out.json.part" "$out.json"
        \(extra)
        """
    }

    /// Writes an executable owned by root, mode 0755 unless told.
    func install(_ name: String, _ body: String, in directory: String? = nil, mode: String = "0755") throws {
        let file = (directory ?? scripts) + "/" + name
        try body.write(toFile: file, atomically: false, encoding: .utf8)
        try sh("chmod \(mode) '\(file)'")
    }

    func start(scriptDirectories: [String]? = nil) throws {
        var arguments = ["--socket", socketPath, "--config", path + "/dispatcher.conf", "--state-dir", path + "/state",
                         "--systemctl", path + "/systemctl", "--log-level", "debug"]
        for directory in scriptDirectories ?? [scripts] { arguments += ["--script-dir", directory] }
        child = try Child(Binaries.reachdDispatcher, arguments)
    }

    /// SIGTERM; its exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let child else { return -1 }
        child.signal(SIGTERM)
        let status = child.wait(timeout: 20)
        stderrOfEarlierRuns += child.stderr
        self.child = nil
        return status
    }

    var stderr: String { stderrOfEarlierRuns + (child?.stderr ?? "") }

    var runs: [Run] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path + "/runs")) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            let base = path + "/runs/" + String(name.dropLast(5))
            guard let environment = FileManager.default.contents(atPath: base + ".env"),
                  let input = FileManager.default.contents(atPath: base + ".json") else { return nil }
            let script = String(name.dropLast(5).drop { $0 != "-" }.dropFirst())
            return Run(script: script, environmentBytes: Array(environment), inputBytes: Array(input))
        }
    }

    /// The commands the fake systemctl got, for one unit: `start`, `stop`.
    func unitCommands(_ target: NetworkTarget) -> [String] {
        let log = (try? String(contentsOfFile: path + "/units.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 3, words[1] == "--no-block", words[2] == target.unitName else { return nil }
            return String(words[0])
        }
    }

    deinit { if let child, child.isRunning { child.signal(SIGKILL); child.wait(timeout: 5) } }
}

extension ServiceSystemTests {
/// reachd-dispatcher against a real reachd in test namespaces, with real scripts.
@Suite struct DispatcherIntegrationTests {
    static func daemonConfig(probe: Bool) -> String {
        probe ? ConnectivitySystemTests.ProbeIntegrationTests.config() : DaemonUnderTest.defaultConfig
    }

    /// The status reachd reports now.
    static func currentStatus(_ daemon: DaemonUnderTest) throws -> Status {
        try WireJSON.decoder().decode(Status.self, from: Data(try daemon.reachctl(["status", "--json"]).stdout.utf8))
    }

    /// How often the dispatcher said that a hold of `target` ran out with nothing to change.
    static func holdsOver(_ target: NetworkTarget, _ dispatcher: DispatcherUnderTest) -> Int {
        dispatcher.stderr.components(separatedBy: "\(target.unitName): hold over, nothing to change").count - 1
    }

    /// True when a run saw interface `name` (a marker the test added).
    static func ran(_ dispatcher: DispatcherUnderTest, interface name: String) -> Bool {
        dispatcher.runs.contains { run in (try? run.event())?.current.interfaces.contains { $0.name == name } == true }
    }

    /// True when the last run saw what reachd reports now.
    static func caughtUp(_ dispatcher: DispatcherUnderTest, _ daemon: DaemonUnderTest) -> Bool {
        guard let last = dispatcher.runs.last, let event = try? last.event(), let now = try? currentStatus(daemon) else { return false }
        return now.changes(from: event.current).isEmpty
    }

    /// A scripted sequence (not reachable, Ethernet, full, portal, carrier gone): every run gets
    /// exactly the documented environment, agreeing with the event on its stdin; scripts run in
    /// order, batch after batch, each batch starting where the last ended; a script configured
    /// for `connectivity` runs only for that; the targets follow after their hold.
    @Test(.needsRoot()) func scriptsGetTheDocumentedEnvironmentInOrderAndTargetsFollow() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.daemonConfig(probe: true))
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath,
                                                 config: "[Targets]\nHoldSec=0.5\n[Scripts]\nChanges.30-*=connectivity\n")
        for name in ["10-first", "20-second", "30-connectivity"] { try dispatcher.install(name, dispatcher.recorder()) }
        try dispatcher.start()
        #expect(waitUntil(timeout: 15) { dispatcher.unitCommands(.internet) == ["stop"] }, "\(dispatcher.stderr)")

        let link = try VethUplink(host: host, uplink: uplink)
        _ = try link.settledLinkLocal()
        #expect(waitUntil(timeout: 20) { dispatcher.unitCommands(.internet) == ["stop", "start"] }, "\(dispatcher.stderr)")
        try server.set(.redirect("/login"))
        // Asked until the verdict is the portal's: a probe right after the last one may answer
        // from the verdict it has.
        #expect(waitUntil(timeout: 20) { (try? daemon.reachctl(["probe"]).stdout.contains("portal")) == true })
        #expect(waitUntil(timeout: 20) { dispatcher.unitCommands(.internet) == ["stop", "start", "stop"] }, "\(dispatcher.stderr)")
        // The portal's run first: a change less than MinIntervalSec= after it would be merged in.
        #expect(waitUntil(timeout: 20) { dispatcher.runs.contains { $0.environment["REACHD_CONNECTIVITY"] == "portal" } }, "\(dispatcher.stderr)")
        try link.dropCarrier()
        #expect(waitUntil(timeout: 20) { dispatcher.unitCommands(.online) == ["stop", "start", "stop"] }, "\(dispatcher.stderr)")
        #expect(waitUntil(timeout: 20) { Self.caughtUp(dispatcher, daemon) })
        #expect(waitUntil(timeout: 5) { dispatcher.unitCommands(.unmetered) == ["stop", "start", "stop"] })
        // The last batch may still be running (its first script's run is what `caughtUp` saw):
        // SIGTERM lets it finish before the dispatcher exits, so every batch is read whole.
        #expect(dispatcher.stop() == 0)

        let runs = dispatcher.runs
        var batches: [(sequence: Int, scripts: [String], event: ReachabilityEvent)] = []
        for run in runs {
            let environment = run.environment
            let event = try run.event()
            #expect(Set(environment.keys) == documentedScriptEnvironment, "\(run.script): \(environment.keys.sorted())")
            #expect(environment["REACHD_SCRIPT"] == run.script)
            #expect(environment["REACHD_SEQUENCE"] == String(event.sequence))
            #expect(environment["REACHD_EVENT"] == event.event.rawValue)
            #expect(environment["REACHD_STATUS"] == event.current.status.rawValue)
            #expect(environment["REACHD_PREVIOUS_STATUS"] == (event.previous?.status.rawValue ?? ""))
            #expect(environment["REACHD_REACHABLE"] == (event.current.reachable ? "yes" : "no"))
            #expect(environment["REACHD_CONNECTIVITY"] == event.current.connectivity.rawValue)
            #expect(environment["REACHD_PREVIOUS_CONNECTIVITY"] == (event.previous?.connectivity.rawValue ?? ""))
            #expect(environment["REACHD_INTERFACE"] == (event.current.primary?.name ?? ""))
            #expect(environment["REACHD_REASON"] == event.reason.code.rawValue)
            #expect(environment["REACHD_CHANGES"] == event.changes.joined(separator: " "))
            #expect(environment["REACHD_PORTAL_URL"] == (event.current.probe?.portalUrl ?? ""))
            #expect(environment["REACHD_EXPENSIVE"] == "no")
            #expect(environment["REACHD_STALL"] == (event.current.pathStall?.words ?? ""))
            #expect(environment["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
            #expect(Int(environment["REACHD_COALESCED"] ?? "") ?? 0 >= 1)
            if run.script == "30-connectivity" {
                #expect(event.event == .initial || event.changes.contains("connectivity"), "30-connectivity ran for \(event.changes)")
            }
            if let last = batches.last, last.sequence == event.sequence {
                batches[batches.count - 1].scripts.append(run.script)
            } else {
                batches.append((event.sequence, [run.script], event))
            }
        }
        // In order: each batch runs its scripts in lexical order, batches in sequence order.
        for (index, batch) in batches.enumerated() {
            #expect(batch.scripts == batch.scripts.sorted() && batch.scripts.starts(with: ["10-first", "20-second"]), "\(batch.scripts)")
            if index > 0 {
                let before = batches[index - 1]
                #expect(batch.sequence > before.sequence)
                // Nothing lost between batches: each starts from the state the last one ended in.
                #expect(batch.event.previous.map { $0.changes(from: before.event.current).isEmpty } == true,
                        "batch #\(batch.sequence) does not start where #\(before.sequence) ended")
            }
        }
        #expect(batches.first?.event.event == .initial)
        #expect(batches.first?.event.current.reachable == false)
        let connectivities = batches.map(\.event.current.connectivity)
        #expect(connectivities.contains(.full) && connectivities.contains(.portal))
        let portal = try #require(runs.first { $0.environment["REACHD_CONNECTIVITY"] == "portal" })
        #expect(portal.environment["REACHD_PORTAL_URL"] == "http://10.77.0.1:8080/login")
        #expect(portal.environment["REACHD_INTERFACE"] == "eth0")
        #expect(portal.environment["REACHD_INTERFACE_KIND"] == "ethernet")
        let last = try #require(runs.last?.environment)
        #expect(last["REACHD_STATUS"] == "notReachable" && last["REACHD_REACHABLE"] == "no" && last["REACHD_CONNECTIVITY"] == "none")
        #expect(last["REACHD_PREVIOUS_REACHABLE"] == "yes")
        #expect(runs.contains { $0.script == "30-connectivity" && $0.environment["REACHD_CONNECTIVITY"] == "portal" })
    }

    /// With the check off (`[Connectivity] Enabled=no`) connectivity stays `unknown` and the
    /// status says the check is off: `reachctl status` says `internet: not checked`, and a
    /// reachable path is the internet for `wait --internet` and reachd-internet.target, as
    /// NetworkManager counts it with its check off.
    @Test(.needsRoot()) func withTheCheckOffAReachablePathIsTheInternet() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nHoldSec=0.5\n")
        try dispatcher.start()
        #expect(waitUntil(timeout: 15) { dispatcher.unitCommands(.internet) == ["stop"] }, "\(dispatcher.stderr)")
        // Not reachable yet: nothing to wait for.
        let early = try daemon.reachctl(["wait", "--internet", "--timeout", "1", "-q"])
        #expect(early.status == 1, "\(early)")

        _ = try VethUplink(host: host, uplink: uplink)
        #expect(waitUntil(timeout: 20) { dispatcher.unitCommands(.internet) == ["stop", "start"] }, "\(dispatcher.stderr)")
        let waited = try daemon.reachctl(["wait", "--internet", "--timeout", "10"])
        #expect(waited.status == 0, "\(waited)")
        #expect(waited.stdout.contains("internet: not checked"), "\(waited.stdout)")
        let status = try Self.currentStatus(daemon)
        #expect(status.reachable && status.connectivity == .unknown && status.probe == nil && !status.connectivityCheck)
        let line = try daemon.reachctl(["status"]).stdout
        #expect(line.hasPrefix("online · ethernet (eth0) · internet: not checked · IPv4"), "\(line)")
        #expect(try daemon.reachctl(["status", "--json"]).stdout.contains(#""connectivityCheck":false"#))
        #expect(try daemon.reachctl(["probe"]).status == 1)
    }

    /// A carrier flap shorter than HoldSec= stops nothing (the scripts still see it); one that
    /// lasts stops the targets.
    @Test(.needsRoot()) func aFlapShorterThanTheHoldStopsNothing() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let link = try VethUplink(host: host, uplink: uplink)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nHoldSec=2\n")
        try dispatcher.install("10-record", dispatcher.recorder())
        try dispatcher.start()
        #expect(waitUntil(timeout: 15) { dispatcher.unitCommands(.online) == ["start"] }, "\(dispatcher.stderr)")
        let runsBefore = dispatcher.runs.count
        let holdsOverBefore = Self.holdsOver(.online, dispatcher)
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { (try? Self.currentStatus(daemon).reachable) == false })
        // The scripts' run for the drop first: a change less than MinIntervalSec= after it
        // would be merged in (the last run was more than a hold ago, so it is not held back).
        #expect(waitUntil(timeout: 10) { dispatcher.runs.contains { $0.environment["REACHD_REACHABLE"] == "no" } }, "\(dispatcher.stderr)")
        try link.restoreCarrier()
        #expect(waitUntil(timeout: 10) { (try? Self.currentStatus(daemon).reachable) == true })
        // Past the hold (the dispatcher says when the flap's hold ran out): still only the first start.
        #expect(waitUntil(timeout: 10) { Self.holdsOver(.online, dispatcher) > holdsOverBefore }, "\(dispatcher.stderr)")
        #expect(!dispatcher.stderr.contains("stopping \(NetworkTarget.online.unitName)"), "\(dispatcher.stderr)")
        #expect(dispatcher.unitCommands(.online) == ["start"])
        #expect(dispatcher.runs.contains { $0.environment["REACHD_REACHABLE"] == "no" }, "the scripts saw the flap")
        #expect(dispatcher.runs.count > runsBefore)
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { dispatcher.unitCommands(.online) == ["start", "stop"] }, "\(dispatcher.stderr)")
        #expect(waitUntil(timeout: 5) { dispatcher.unitCommands(.unmetered) == ["start", "stop"] })
        // The daemon's check is off: the internet target follows reachability, flap and all.
        #expect(waitUntil(timeout: 5) { dispatcher.unitCommands(.internet) == ["start", "stop"] })
    }

    /// A script that hangs (and ignores SIGTERM) is killed with its process group after
    /// Timeout= (+2 s for SIGKILL); the events that came meanwhile run next, coalesced.
    @Test(.needsRoot()) func aHangingScriptIsKilledAndTheNextEventRuns() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nEnabled=no\n[Scripts]\nTimeout=1\n")
        let marker = dispatcher.path + "/hung"
        try dispatcher.install("10-hang", """
            #!/bin/sh
            if [ ! -e '\(marker)' ]; then
              touch '\(marker)'
              trap '' TERM
              sleep 61.25 &
              sleep 61.25
            fi
            """)
        try dispatcher.install("20-record", dispatcher.recorder())
        try dispatcher.start()
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: marker) })
        _ = try VethUplink(host: host, uplink: uplink)
        #expect(waitUntil(timeout: 20) { dispatcher.runs.contains { $0.environment["REACHD_STATUS"] == "ethernet" } }, "\(dispatcher.stderr)")
        #expect(dispatcher.stderr.contains("10-hang: #"), "\(dispatcher.stderr)")
        #expect(dispatcher.stderr.contains("killed after Timeout=1s"), "\(dispatcher.stderr)")
        // The batch of the hang (initial), then the events that came while it hung, in one run.
        let runs = dispatcher.runs
        #expect(runs.first?.environment["REACHD_EVENT"] == "initial")
        #expect(runs.dropFirst().first.map { Int($0.environment["REACHD_COALESCED"] ?? "") ?? 0 > 1 } == true,
                "\(runs.map(\.environment))")
        // Its whole process group went with it.
        #expect(try sh("pgrep -f 'sleep 61[.]25'", check: false).output.isEmpty)
    }

    /// Only root's scripts that no one else can write run; a symlink to /dev/null masks a
    /// script of the same name in a later directory, and an earlier directory's script
    /// replaces a later one's.
    @Test(.needsRoot()) func refusesScriptsOthersCouldWriteAndMergesDirectoriesByName() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nEnabled=no\n")
        let library = dispatcher.path + "/lib"
        try sh("mkdir -m 0755 '\(library)'")
        try dispatcher.install("10-world-writable", dispatcher.recorder(), mode: "0777")
        try dispatcher.install("20-group-writable", dispatcher.recorder(), mode: "0775")
        try dispatcher.install("30-foreign", dispatcher.recorder())
        try sh("chown 65534 '\(dispatcher.scripts)/30-foreign'")
        try dispatcher.install("40-ok", dispatcher.recorder())
        try sh("ln -s /dev/null '\(dispatcher.scripts)/50-masked'")
        try dispatcher.install("40-ok", "#!/bin/sh\ntouch '\(dispatcher.path)/wrong'\n", in: library)
        try dispatcher.install("50-masked", "#!/bin/sh\ntouch '\(dispatcher.path)/wrong'\n", in: library)
        try dispatcher.install("60-library", dispatcher.recorder(), in: library)
        try dispatcher.start(scriptDirectories: [dispatcher.scripts, library])
        #expect(waitUntil(timeout: 15) { dispatcher.runs.count == 2 && dispatcher.stderr.contains("60-library: #") }, "\(dispatcher.stderr)")
        #expect(dispatcher.runs.map(\.script) == ["40-ok", "60-library"])
        #expect(!FileManager.default.fileExists(atPath: dispatcher.path + "/wrong"))
        let stderr = dispatcher.stderr
        #expect(stderr.contains("refusing to run \(dispatcher.scripts)/10-world-writable: writable by group (mode 0777)"), "\(stderr)")
        #expect(stderr.contains("refusing to run \(dispatcher.scripts)/20-group-writable: writable by group (mode 0775)"), "\(stderr)")
        #expect(stderr.contains("refusing to run \(dispatcher.scripts)/30-foreign: owned by uid 65534, not by root"), "\(stderr)")
        // A directory others can write to is refused as a whole.
        try sh("chmod 0777 '\(library)'")
        try sh("ip -n \(host.name) link add rch-x type veth peer name rch-y")
        #expect(waitUntil(timeout: 15) { dispatcher.stderr.contains("refusing script directory \(library): writable by group or others") })
        #expect(waitUntil(timeout: 5) { dispatcher.runs.count >= 3 })
        // A marker event: by the time its run is there, any run of the batch before it is too.
        try sh("ip -n \(host.name) link add rch-m type veth peer name rch-n")
        #expect(waitUntil(timeout: 15) { Self.ran(dispatcher, interface: "rch-m") }, "\(dispatcher.stderr)")
        #expect(!dispatcher.runs.contains { $0.script == "60-library" && $0.environment["REACHD_CHANGES"] != "" })
        #expect(dispatcher.runs.dropFirst(2).allSatisfy { $0.script == "40-ok" })
    }

    /// An interface whose name holds ESC and BEL: no script gets a raw control byte, in its
    /// environment or on stdin (JSON escapes them), and the dispatcher's log has none either.
    @Test(.needsRoot()) func anInterfaceNameWithEscapeBytesReachesNoScriptRaw() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nEnabled=no\n")
        try dispatcher.install("10-record", dispatcher.recorder("echo \"interface $REACHD_INTERFACE\" >&2"))
        try dispatcher.start()
        let name = "e\u{1b}x\u{7}y"
        _ = try VethUplink(host: host, uplink: uplink, inner: name)
        #expect(waitUntil(timeout: 20) { dispatcher.runs.contains { $0.environment["REACHD_STATUS"] == "ethernet" } }, "\(dispatcher.stderr)")
        let runs = dispatcher.runs
        let reachable = try #require(runs.last { $0.environment["REACHD_STATUS"] == "ethernet" })
        #expect(reachable.environment["REACHD_INTERFACE"] == "e\\x1bx\\x07y")
        #expect(try reachable.event().current.primary?.name == name, "\(String(decoding: reachable.inputBytes, as: UTF8.self))")
        for run in runs {
            #expect(!run.environmentBytes.contains { ($0 != 0 && $0 < 0x20) || $0 == 0x7f }, "raw control byte in \(run.script)'s environment")
            #expect(!run.inputBytes.dropLast().contains { $0 < 0x20 || $0 == 0x7f }, "raw control byte on \(run.script)'s stdin")
        }
        // The script's own stderr line is logged after its record appears.
        #expect(waitUntil(timeout: 10) { dispatcher.stderr.contains("interface e\\x1bx\\x07y") }, "\(dispatcher.stderr)")
        #expect(!dispatcher.stderr.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\u{7}" })
    }

    /// A flood of events (reachd's `Simulate` in a loop, standing for a router that announces
    /// a new DNS server in every advertisement): runs start at least MinIntervalSec= apart, so
    /// there are at most as many as intervals passed, plus the first; every event is in exactly
    /// one run (REACHD_COALESCED adds up), and the last state gets its run.
    @Test(.needsRoot()) func aFloodOfEventsIsAtMostOneRunPerInterval() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath,
                                                 config: "[Targets]\nEnabled=no\n[Dispatcher]\nMinIntervalSec=1\n")
        try dispatcher.install("10-record", dispatcher.recorder())
        try dispatcher.start()
        #expect(waitUntil(timeout: 15) { dispatcher.runs.count == 1 }, "\(dispatcher.stderr)")
        let before = dispatcher.runs.count
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        func simulate(_ status: String, _ connectivity: String) throws {
            _ = try client.callBlocking(method: "\(Varlink.reachabilityInterface).Simulate",
                                        parameters: ["status": .string(status), "connectivity": .string(connectivity)])
                .decode(Status.self, key: "status")
        }
        // 400 events over about 3 s (paced, so that the flood spans several intervals).
        let flood = 400
        let started = Date()
        for index in 0..<flood {
            try simulate(index % 2 == 0 ? "ethernet" : "wifi", "limited")
            let ahead = started.addingTimeInterval(Double(index + 1) * 3 / Double(flood)).timeIntervalSinceNow
            if ahead > 0 { usleep(UInt32(ahead * 1e6)) }
        }
        try simulate("wifi", "portal")
        #expect(waitUntil(timeout: 20) {
            dispatcher.runs.last.map { $0.environment["REACHD_CONNECTIVITY"] == "portal" && $0.environment["REACHD_STATUS"] == "wifi" } == true
        }, "\(dispatcher.stderr.suffix(2000))")
        let elapsed = Date().timeIntervalSince(started)
        let runs = Array(dispatcher.runs.dropFirst(before))
        let coalesced = runs.map { Int($0.environment["REACHD_COALESCED"] ?? "") ?? 0 }
        print("figures: \(flood + 1) events in \(elapsed) s: \(runs.count) runs, REACHD_COALESCED \(coalesced)")
        #expect(runs.count <= Int(elapsed.rounded(.up)) + 1, "\(runs.count) runs in \(elapsed) s: \(coalesced)")
        #expect(coalesced.reduce(0, +) == flood + 1, "every event in exactly one run: \(coalesced)")
        #expect(coalesced.contains { $0 > 1 })
        let last = try #require(runs.last)
        #expect(last.environment["REACHD_SIMULATED"] == "yes")
        #expect(try last.event().current.connectivity == .portal)
        #expect(dispatcher.stop() == 0)
    }

    /// Restarts of either side, with and without changes meanwhile: every batch starts where the
    /// last ended (nothing lost), no sequence number runs twice (nothing repeated), a reachd
    /// restart with the same network runs nothing, and the last run saw what reachd reports.
    @Test(.needsRoot()) func restartsOfReachdOrTheDispatcherLoseAndRepeatNothing() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let daemon = try DaemonUnderTest(namespace: host)
        let dispatcher = try DispatcherUnderTest(socketPath: daemon.socketPath, config: "[Targets]\nEnabled=no\n")
        try dispatcher.install("10-record", dispatcher.recorder())
        try dispatcher.start()
        let link = try VethUplink(host: host, uplink: uplink)
        _ = try link.settledLinkLocal()
        #expect(waitUntil(timeout: 20) { Self.caughtUp(dispatcher, daemon) }, "\(dispatcher.stderr)")

        // The dispatcher stops; events happen; it resumes after the last one it ran.
        #expect(dispatcher.stop() == 0)
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { (try? Self.currentStatus(daemon).reachable) == false })
        try dispatcher.start()
        #expect(waitUntil(timeout: 20) { Self.caughtUp(dispatcher, daemon) }, "\(dispatcher.stderr)")
        #expect(dispatcher.stderr.contains("resuming after event #"))

        // reachd restarts with the network changed meanwhile: one run, as a resync.
        daemon.stop()
        try link.restoreCarrier()
        try daemon.start()
        #expect(waitUntil(timeout: 20) { Self.caughtUp(dispatcher, daemon) }, "\(dispatcher.stderr)")
        #expect(dispatcher.runs.contains { $0.environment["REACHD_REASON"] == "resync" })

        // Restarts with nothing changed run nothing: between a marker event's run before them
        // and another's after them, no run.
        _ = try link.settledLinkLocal()
        try host.ip("link add rch-a type veth peer name rch-b")
        #expect(waitUntil(timeout: 20) { Self.ran(dispatcher, interface: "rch-a") && Self.caughtUp(dispatcher, daemon) },
                "\(dispatcher.stderr)")
        let settled = dispatcher.runs.count
        try daemon.restart()
        #expect(dispatcher.stop() == 0)
        try dispatcher.start()
        try host.ip("link add rch-c type veth peer name rch-d")
        #expect(waitUntil(timeout: 20) { Self.ran(dispatcher, interface: "rch-c") }, "\(dispatcher.stderr)")
        // Only the marker's runs (its two links may come as two events), the first of them
        // from the state before it: nothing ran for the restarts.
        let afterRestarts = Array(dispatcher.runs.dropFirst(settled))
        let markers: Set<String> = ["rch-c", "rch-d"]
        #expect(!afterRestarts.isEmpty && afterRestarts.allSatisfy { run in
            guard let event = try? run.event() else { return false }
            let added = Set(event.current.interfaces.map(\.name)).subtracting(event.previous?.interfaces.map(\.name) ?? [])
            return event.changes == ["interfaces"] && !added.isEmpty && added.isSubset(of: markers)
        }, "\(afterRestarts.map(\.environment))")
        #expect(afterRestarts.first.map { (try? $0.event())?.previous?.interfaces.contains { markers.contains($0.name) } == false } == true)

        let events = try dispatcher.runs.map { try $0.event() }
        for (before, after) in zip(events, events.dropFirst()) {
            #expect(after.sequence > before.sequence, "#\(after.sequence) ran after #\(before.sequence)")
            #expect(after.previous.map { $0.changes(from: before.current).isEmpty } == true,
                    "#\(after.sequence) does not start where #\(before.sequence) ended")
        }
        #expect(Set(events.map(\.sequence)).count == events.count)
        #expect(dispatcher.stop() == 0)
    }
}
}
