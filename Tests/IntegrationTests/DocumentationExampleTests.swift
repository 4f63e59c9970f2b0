import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The examples of README.md and docs/*.md, read as they stand: every console block and every
/// block marked `<!-- example: … -->` is found, and the mark names a situation this file knows.
/// No root needed: these run with the unit tests.
@Suite struct DocumentationExampleMarkTests {
    static let examples = DocumentationExamples.files(root: Paths.packageRoot).flatMap { file in
        DocumentationExamples.examples(in: (try? String(contentsOfFile: Paths.file(file), encoding: .utf8)) ?? "", file: file)
    }

    @Test func everyConsoleBlockSaysHowItRuns() {
        #expect(Self.examples.count > 10)
        for example in Self.examples {
            #expect(example.mark != nil, "\(example): a console block without <!-- example: SCENARIO --> or <!-- example: not run (WHY) -->")
            #expect(example.language != "sh" || !example.body.contains { $0.hasPrefix("$ ") },
                    "\(example): a transcript with $ prompts is a console block")
            if let scenarios = example.scenario.map(ExampleScenario.names) {
                for name in scenarios {
                    #expect(ExampleScenario.all[name] != nil, "\(example): no scenario \(name) in DocumentationExampleTests.swift")
                }
            }
        }
    }

    /// The configuration examples marked `<!-- example: PROGRAM --check-config -->` pass the
    /// program's own check, as files of the name they show.
    @Test func everyConfigurationExampleIsAccepted() throws {
        let checked = Self.examples.filter { $0.configChecker != nil }
        #expect(checked.count >= 3)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for example in checked {
            let program = example.configChecker ?? ""
            #expect(["reachd", "reachd-dispatcher"].contains(program), "\(example): \(program)")
            let path = directory.path + "/example.conf"
            try (example.body.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            let result = try run(Binaries.directory + "/" + program, ["--check-config", "--config", path])
            #expect(result.status == 0, "\(example): \(program) --check-config: \(result.stdout) \(result.stderr)")
        }
    }

    /// A story or an output a scenario gives belongs to a command of an example run on it: an
    /// example whose command was edited loses neither silently.
    @Test func everyStoryBelongsToADocumentedCommand() {
        var commands: [String: Set<String>] = [:]
        for example in Self.examples {
            guard let mark = example.scenario else { continue }
            let names = ExampleScenario.names(mark)
            switch example.language {
            case "python": commands[names[0], default: []].insert("python")
            case "sh": for line in example.body where !line.isEmpty { commands[names[0], default: []].insert(line) }
            default:
                for (index, step) in example.steps.enumerated() { commands[names[min(index, names.count - 1)], default: []].insert(step.command) }
            }
        }
        for (name, scenario) in ExampleScenario.all {
            for command in Set(scenario.stories.keys).union(scenario.outputs.keys) {
                #expect(commands[name]?.contains(command) == true, "scenario \(name): no documented example runs `\(command)` on it")
            }
        }
    }

    @Test func findsMarkedAndConsoleBlocks() {
        let text = """
        <!-- example: ethernet -->
        ```console
        $ reachctl status
        online
        ```
        ```sh
        make run
        ```
        ```
        $ reachctl probe
        ```
        <!-- example: not run (needs Wi-Fi hardware) -->
        ```console
        $ iw dev
        ```
        ````markdown
        ```console
        $ reachctl status
        ```
        ````
        """
        let found = DocumentationExamples.examples(in: text, file: "x.md")
        #expect(found.map(\.line) == [2, 9, 13])
        #expect(found.map(\.scenario) == ["ethernet", nil, nil])
        #expect(found.map(\.notRunReason) == [nil, nil, "needs Wi-Fi hardware"])
        #expect(found[0].steps == [ConsoleStep(command: "reachctl status", expected: ["online"])])
    }

    @Test func masksTimesSequencesAndDurationsOnly() {
        #expect(DocumentationExamples.lineMatches(expected: "2026-11-29T14:27:27.343Z #1795962446345 initial: offline",
                                                  actual: "2026-12-04T19:45:46.667Z #1796413545610 initial: offline"))
        #expect(!DocumentationExamples.lineMatches(expected: "2026-11-29T14:27:27.343Z #1795962446345 initial: offline",
                                                   actual: "2026-12-04T19:45:46.667Z #1796413545610 initial: online"))
        #expect(DocumentationExamples.lineMatches(expected: "internet: full · HTTP 204 · 18.2 ms · http://a/",
                                                  actual: "internet: full · HTTP 204 · 2.6 ms · http://a/"))
        #expect(!DocumentationExamples.lineMatches(expected: "internet: full · HTTP 204 · 18.2 ms · http://a/",
                                                   actual: "internet: full · HTTP 200 · 2.6 ms · http://a/"))
        // Addresses are compared as they are.
        #expect(!DocumentationExamples.lineMatches(expected: "reachable via eth0 gateway 10.0.0.1", actual: "reachable via eth0 gateway 10.0.0.2"))
        #expect(DocumentationExamples.lineMatches(expected: #"reachd_status_seconds_total{status="wifi"} 86012.5"#,
                                                  actual: #"reachd_status_seconds_total{status="wifi"} 2.0559446"#))
        #expect(!DocumentationExamples.lineMatches(expected: #"reachd_events_total{reason="linkUp"} 1"#,
                                                   actual: #"reachd_events_total{reason="linkUp"} 2"#))
    }

    @Test func anEllipsisStandsForTextOrLines() {
        #expect(DocumentationExamples.lineMatches(expected: "log in at http://login.hotel.example/?orig=… · http://c/",
                                                  actual: "log in at http://login.hotel.example/?orig=http%3A%2F%2Fc%2F · http://c/"))
        #expect(!DocumentationExamples.lineMatches(expected: "log in at http://login.hotel.example/?orig=… · http://c/",
                                                   actual: "log in at http://other.example/?orig=x · http://c/"))
        #expect(DocumentationExamples.matches(expected: ["a", "…", "d"], actual: ["a", "b", "c", "d"]))
        #expect(DocumentationExamples.matches(expected: ["a", "…", "d"], actual: ["a", "d"]))
        #expect(DocumentationExamples.matches(expected: ["a", "…"], actual: ["a", "b"]))
        #expect(!DocumentationExamples.matches(expected: ["a", "…", "d"], actual: ["a", "b", "c"]))
        #expect(!DocumentationExamples.matches(expected: ["a", "b"], actual: ["a", "b", "c"]))
    }

    @Test func knowsWhichCommandsRunUntilInterrupted() {
        #expect(ConsoleStep(command: "reachctl monitor          # a veth uplink appears", expected: []).runsUntilInterrupted)
        #expect(ConsoleStep(command: "reachctl check far.example --watch", expected: []).runsUntilInterrupted)
        #expect(ConsoleStep(command: "reachctl simulate notReachable              # until Ctrl-C", expected: []).runsUntilInterrupted)
        #expect(!ConsoleStep(command: "reachctl simulate wwan2G --connectivity portal --for 60", expected: []).runsUntilInterrupted)
        #expect(!ConsoleStep(command: "reachctl status", expected: []).runsUntilInterrupted)
    }
}

extension ServiceSystemTests {
/// README.md's and docs/*.md's examples run against a reachd in a network namespace whose
/// situation is the one each example shows (its mark names it: `ExampleScenario`), and what
/// they print has the shape the documentation shows (`DocumentationExamples.matches`: times,
/// sequence numbers, durations and fractional metric values masked, `…` for what the example
/// leaves out). Console blocks run command by command; a command that runs until interrupted
/// (`monitor`, `check --watch`, `simulate STATUS`) is interrupted once its lines are there,
/// while the scenario's story changes the network between lines. The README's shell lines run
/// side by side, its python client as shown (the socket path made the test's). Blocks run three
/// at a time, each on a machine of its own. To run just these: `swift test --filter
/// DocumentationExample`.
@Suite struct DocumentationExampleTests {
    @Test(.needsRoot(), .requires(.pythonVarlink, .curl, Requirement.executable("jq", at: ["/usr/bin/jq"], install: "scripts/deps.sh")))
    func everyExamplePrintsWhatTheDocumentationShows() throws {
        try Requirement.pythonVarlink.check()
        let examples = DocumentationExampleMarkTests.examples
        // The shell lines first: `wait --stable 10` is the longest.
        let runnable = examples.filter { $0.scenario != nil }.sorted { ($0.language == "sh" ? 0 : 1) < ($1.language == "sh" ? 0 : 1) }
        let notRun = examples.filter { $0.notRunReason != nil }
        let problems = Mutex<[String]>([]), durations = Mutex<[String]>([])
        let started = Date()
        let next = Mutex(0)
        let workers = (0..<3).map { _ in
            Thread.detachNewThreadWithResult {
                while true {
                    let index: Int = next.withLock { $0 += 1; return $0 - 1 }
                    guard index < runnable.count else { return }
                    let started = Date()
                    let found = ExampleRunner.run(runnable[index])
                    let seconds = Date().timeIntervalSince(started)
                    problems.withLock { $0 += found }
                    durations.withLock { $0.append("\(runnable[index]) \(String(format: "%.1f", seconds)) s") }
                }
            }
        }
        for worker in workers { _ = worker.wait() }
        for problem in problems.withLock({ $0 }) { Issue.record(Comment(rawValue: problem)) }
        print("figures: documentation examples took \(String(format: "%.1f", Date().timeIntervalSince(started))) s, three at a time: "
              + durations.withLock { $0 }.joined(separator: ", "))
        let elsewhere = examples.filter { $0.runBy != nil }
            + examples.filter { $0.configChecker != nil }.map {
                DocumentationExample(file: $0.file, line: $0.line, language: $0.language, mark: "checked by DocumentationExampleMarkTests", body: [])
            }
        print("documentation examples: \(runnable.count) run here, \(elsewhere.count) by other checks"
              + elsewhere.map { "\n  \($0): \($0.runBy ?? $0.mark ?? "")" }.joined() + "\n\(notRun.count) not run"
              + notRun.map { "\n  \($0): not run (\($0.notRunReason ?? ""))" }.joined())
    }
}
}

/// A step of a scenario's story: once the command has printed `afterLines` lines, `action`
/// changes the network.
struct StoryStep: Sendable {
    let afterLines: Int
    let action: @Sendable (ExampleStage) throws -> Void
}

/// The situation an example runs in: how its machine is set up, what happens while a command
/// runs, and for blocks that show no output (the README's shell lines and python client) what
/// each prints.
struct ExampleScenario: Sendable {
    let setup: @Sendable (ExampleStage) throws -> Void
    /// The story while `command` runs (for a python block: "python").
    var stories: [String: [StoryStep]] = [:]
    /// The output of a command whose block shows none.
    var outputs: [String: [String]] = [:]

    /// The scenarios of a mark: `a | b` runs the first command on `a`, the others on `b`.
    static func names(_ mark: String) -> [String] {
        mark.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    static let all: [String: ExampleScenario] = [
        // eth0 with IPv4 and IPv6, the check answered on both.
        "ethernet": ExampleScenario(setup: { stage in
            try stage.uplink("eth0", subnet: 0, ipv6: true)
            try stage.host.ip("route add blackhole 198.51.100.7")
            try stage.uplinks[0].listenTCP(port: 443)
            try stage.startDaemon(until: "internet: full · IPv4 + IPv6")
            try stage.settleLinkLocal("eth0")
        }, stories: [
            "reachctl check far.example --watch": [
                StoryStep(afterLines: 1) { try $0.uplinks[0].ip("link set up0 down") },
                StoryStep(afterLines: 2) { try $0.uplinks[0].ip("link set up0 up") },
            ],
            "python": [StoryStep(afterLines: 2) { try $0.uplinks[0].ip("link set up0 down") }],
        ], outputs: [
            "python": ["ethernet", "initial ethernet", "carrierLost notReachable"],
            "reachctl wait --timeout 60 --internet && ./sync.sh      # in a boot script":
                ["online · ethernet (eth0) · internet: full · IPv4 + IPv6 · quality: good (4g, 1 ms)", "sync.sh ran"],
            "reachctl wait --internet --stable 10 --timeout 120        # …that must not start on a flapping link":
                ["online · ethernet (eth0) · internet: full · IPv4 + IPv6 · quality: good (4g, 1 ms)"],
            "reachctl monitor --changes status,connectivity            # only what an app acts on":
                ["2026-11-29T14:27:27.343Z #1795962446345 initial: online · ethernet (eth0) · internet: full · IPv4 + IPv6 · quality: good (4g, 1 ms)"],
            "reachctl monitor --json | jq -c '{seq: .sequence, why: .reason.code, now: .current.status}'":
                [#"{"seq":…,"why":"initial","now":"ethernet"}"#],
        ]),
        // eth0 with IPv4 alone, the check answered.
        "ethernet-ipv4": ExampleScenario(setup: { stage in
            try stage.uplink("eth0", subnet: 0, ipv6: false)
            try stage.startDaemon(until: "internet: full")
        }),
        // A hotel's network: every request is redirected to its login page.
        "hotel": ExampleScenario(setup: { stage in
            try stage.uplink("eth0", subnet: 0, ipv6: false,
                             mode: .redirect("http://login.hotel.example/?orig=http%3A%2F%2Fconnectivity-check.ubuntu.com%2F"))
            try stage.startDaemon(until: "internet: portal")
        }),
        // Ethernet primary, a Wi-Fi standby uplink behind a portal.
        "standby-portal": ExampleScenario(setup: { stage in
            try stage.uplink("eth0", subnet: 0, ipv6: false, metric: 100)
            try stage.uplink("wlan0", subnet: 1, ipv6: false, metric: 600, mode: .redirect("http://login.example/"))
            try stage.startDaemon(until: "standby · internet: portal", verbose: true)
        }),
        // Wi-Fi coming up under a daemon that exports metrics.
        "metrics-wifi": ExampleScenario(setup: { stage in
            try stage.startDaemon(until: "offline", extra: "[Metrics]\nListen=127.0.0.1:9464\n")
            Thread.sleep(forTimeInterval: 0.2)
            try stage.uplink("wlan0", subnet: 0, ipv6: false)
            try stage.waitForStatus("internet: full")
        }),
        // No uplink yet: an IPv4 veth appears, gets an address, comes up, gets carrier (its
        // peer comes up) and a default route, then loses carrier (the README's monitor). Each
        // step is one message of the kernel's: a link brought up with carrier would be two (the
        // flags at once, the operstate when the kernel's link watch next runs, 0 to 1 s later),
        // which reachd reports as one event or two depending on that timing.
        "veth-appears": ExampleScenario(setup: { stage in
            _ = try stage.uplinkNamespace()
            try stage.startDaemon(until: "offline")
        }, stories: ["reachctl monitor          # an IPv4 veth uplink appears, gets an address, comes up, gets carrier and a route, loses carrier": [
            StoryStep(afterLines: 1) { stage in
                try stage.host.ip("link add eth0 type veth peer name up0 netns \(stage.uplinks[0].name)")
                try stage.uplinks[0].ip("addr add 10.0.0.1/24 dev up0")
            },
            StoryStep(afterLines: 2) { try $0.host.ip("addr add 10.0.0.2/24 dev eth0") },
            StoryStep(afterLines: 3) { try $0.host.ip("link set eth0 up") },
            StoryStep(afterLines: 4) { try $0.uplinks[0].ip("link set up0 up") },
            StoryStep(afterLines: 5) { try $0.host.ip("route add default via 10.0.0.1") },
            StoryStep(afterLines: 7) { try $0.uplinks[0].ip("link set up0 down") },
        ]]),
        // Wi-Fi (IPv4 and IPv6) behind a portal that announces its RFC 8908 API in a router
        // advertisement (with DNS servers, a search domain and a NAT64 prefix); the API, at
        // https://portal.example/capport with a certificate of the test's CA, says 750 s are
        // left; the ordinary check is redirected.
        "captive-portal-api": ExampleScenario(setup: { stage in
            let authority = try TestCertificateAuthority()
            stage.onDestroy { authority.remove() }
            try stage.uplink("wlan0", subnet: 0, ipv6: true, mode: .redirect("http://portal.example/login"))
            let api = try ProbeServer(in: stage.uplinks[0], port: 443, mode: .json(
                #"{"captive": true, "user-portal-url": "https://portal.example/login", "venue-info-url": "https://portal.example/", "#
                    + #""seconds-remaining": 750, "can-extend-session": true}"#),
                certificate: try authority.serverCertificate(dnsName: "portal.example"))
            stage.onDestroy { api.stop() }
            try stage.startDaemon(until: "internet: portal", extra: "[Connectivity]\nCAFile=\(authority.certificate)\n")
            try stage.settleLinkLocal("wlan0", until: "internet: portal")
            try RouterAdvertiser.send(from: stage.uplinks[0], interface: "up0", options: [
                RouterAdvertiser.captivePortal("https://portal.example/capport"),
                RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600),
                RouterAdvertiser.dnssl(["corp.example"], lifetime: 600),
                RouterAdvertiser.pref64("64:ff9b::", lifetime: 600),
            ])
            try stage.waitForStatus("min left")
        }),
        // eth0 with IPv4, the check off.
        "check-off": ExampleScenario(setup: { stage in
            try stage.uplink("eth0", subnet: 0, ipv6: false)
            try stage.startDaemon(until: "online", extra: "[Connectivity]\nEnabled=no\n")
        }),
        // eth0 up with an address, its cable unplugged (the peer down); the cable is plugged in,
        // then a default route added (docs/monitor.md). Its IPv6 link-local address takes 3 s
        // through duplicate address detection (instead of 1), so that its event comes last.
        "eth0-plugged-in": ExampleScenario(setup: { stage in
            let uplink = try stage.uplinkNamespace()
            try stage.host.ip("link add eth0 type veth peer name up0 netns \(uplink.name)")
            try uplink.ip("addr add 10.0.0.1/24 dev up0")
            try stage.host.exec("sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0 net.ipv6.neigh.eth0.retrans_time_ms=3000")
            try stage.host.ip("addr add 10.0.0.2/24 dev eth0")
            try stage.host.ip("link set eth0 up")
            try stage.startDaemon(until: "offline")
        }, stories: ["reachctl monitor": [
            StoryStep(afterLines: 1) { try $0.uplinks[0].ip("link set up0 up") },
            StoryStep(afterLines: 2) { try $0.host.ip("route add default via 10.0.0.1") },
        ]]),
    ]
}

/// The machine one example block runs on: a host namespace where reachd and the commands run,
/// each uplink in a namespace of its own with the check's server (192.0.2.80 and 2001:db8:80::80
/// on its loopback, answering the default URL's host by the host namespace's /etc/hosts, so the
/// check's traffic never leaves the test's namespaces), and a working directory with the
/// scripts the examples call (`./sync.sh`, `./sync-photos`: they leave a mark).
final class ExampleStage: @unchecked Sendable {
    let host: TestNamespace
    private(set) var uplinks: [TestNamespace] = []
    private var servers: [ProbeServer] = []
    private(set) var daemon: DaemonUnderTest?
    /// Files `ip netns exec` puts over /etc/hosts and /etc/resolv.conf in `host`.
    let etc: String
    let work: String

    static let hosts = """
    127.0.0.1 localhost
    ::1 localhost
    192.0.2.80 connectivity-check.ubuntu.com
    2001:db8:80::80 connectivity-check.ubuntu.com
    93.184.216.34 example.com
    2606:2800:21f:cb07:6820:80da:af6b:8b2c example.com
    192.0.2.1 far.example
    203.0.113.10 portal.example

    """

    init() throws {
        host = try TestNamespace(tag: "x")
        etc = "/etc/netns/\(host.name)"
        work = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try Self.hosts.write(toFile: etc + "/hosts", atomically: true, encoding: .utf8)
        // Nothing answers DNS in the namespace: a name not in hosts fails at once.
        try "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".write(toFile: etc + "/resolv.conf", atomically: true, encoding: .utf8)
        for script in ["sync.sh", "sync-photos"] {
            let path = work + "/" + script
            try "#!/bin/sh\necho \(script) ran > \"$0.ran\"\n".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        // Links made from now on have no IPv6 unless an uplink asks for it.
        try host.exec("sysctl -qw net.ipv6.conf.default.disable_ipv6=1")
    }

    private var cleanups: [() -> Void] = []

    /// Runs `cleanup` when the stage is destroyed (servers and files a scenario made).
    func onDestroy(_ cleanup: @escaping () -> Void) { cleanups.append(cleanup) }

    func destroy() {
        daemon?.stop()
        for cleanup in cleanups.reversed() { cleanup() }
        for server in servers { server.stop() }
        host.destroy()
        for uplink in uplinks { uplink.destroy() }
        try? FileManager.default.removeItem(atPath: etc)
        try? FileManager.default.removeItem(atPath: work)
    }

    /// A namespace for the next uplink, its loopback holding the check server's addresses, the
    /// server answering `mode` on port 80.
    @discardableResult
    func uplinkNamespace(mode: ProbeServer.Mode = .noContent) throws -> TestNamespace {
        let uplink = try TestNamespace(tag: "xu")
        uplinks.append(uplink)
        for address in ["192.0.2.80/32", "2001:db8:80::80/128", "93.184.216.34/32", "203.0.113.10/32"] { try uplink.ip("addr add \(address) dev lo") }
        servers.append(try ProbeServer(in: uplink, port: 80, mode: mode, dualStack: true))
        return uplink
    }

    /// Uplink `name`: 10.`subnet`.0.2/24 via 10.`subnet`.0.1, with IPv6 also
    /// 2001:db8:`subnet`::2/64 via ::1; up, with default routes of `metric`.
    func uplink(_ name: String, subnet: Int, ipv6: Bool, metric: Int? = nil, mode: ProbeServer.Mode = .noContent) throws {
        let uplink = try uplinkNamespace(mode: mode)
        try host.ip("link add \(name) type veth peer name up0 netns \(uplink.name)")
        try uplink.ip("addr add 10.\(subnet).0.1/24 dev up0")
        if ipv6 {
            try host.exec("sysctl -qw net.ipv6.conf.\(name).disable_ipv6=0")
            try uplink.ip("addr add 2001:db8:\(subnet)::1/64 dev up0 nodad")
            try host.ip("addr add 2001:db8:\(subnet)::2/64 dev \(name) nodad")
        }
        try uplink.ip("link set up0 up")
        try host.ip("addr add 10.\(subnet).0.2/24 dev \(name)")
        try host.ip("link set \(name) up")
        let routeMetric = metric.map { " metric \($0)" } ?? ""
        try host.ip("route add default via 10.\(subnet).0.1\(routeMetric)")
        if ipv6 { try host.ip("-6 route add default via 2001:db8:\(subnet)::1\(routeMetric)") }
    }

    /// Starts reachd with the default configuration (the check on, its default URL), no
    /// ModemManager, interfaces named wlan* Wi-Fi, and `extra`; waits until `reachctl status`
    /// (with `verbose`, `--verbose`) says `until`.
    func startDaemon(until: String, verbose: Bool = false, extra: String = "") throws {
        daemon = try DaemonUnderTest(namespace: host, config: "[Cellular]\nModemManager=no\n[Interfaces]\nKind.wlan*=wifi\n" + extra)
        try waitForStatus(until, verbose: verbose)
    }

    func waitForStatus(_ text: String, verbose: Bool = false) throws {
        guard let daemon else { throw SetupError("no daemon") }
        let arguments = verbose ? ["status", "--verbose"] : ["status"]
        guard waitUntil(timeout: 20, { (try? daemon.reachctl(arguments).stdout.contains(text)) == true }) else {
            throw SetupError("reachctl \(arguments.joined(separator: " ")) never said \(text): \((try? daemon.reachctl(arguments).stdout) ?? "")\n"
                             + "reachd's log ends: \(daemon.child.stderr.split(separator: "\n").suffix(15).joined(separator: "\n"))")
        }
    }

    /// Waits until `interface`'s IPv6 link-local address has passed duplicate address detection
    /// and reachd lists it, so that its event does not come in the middle of an example; then
    /// until the status says `until` again (the address makes a new path, checked again).
    func settleLinkLocal(_ interface: String, until: String = "internet: full") throws {
        guard let daemon else { throw SetupError("no daemon") }
        var address: String?
        _ = waitUntil(timeout: 10) {
            let line = ((try? host.ip("-6 addr show dev \(interface) scope link")) ?? "").split(separator: "\n")
                .first { $0.contains("inet6 fe80") && !$0.contains("tentative") }
            address = line?.split(separator: " ").drop { $0 != "inet6" }.dropFirst().first.map(String.init)
            return address != nil
        }
        guard let address else { throw SetupError("\(interface): no IPv6 link-local address") }
        guard waitUntil(timeout: 10, { (try? daemon.reachctl(["status", "--json"]).stdout.contains(address)) == true }) else {
            throw SetupError("reachd never listed \(address)")
        }
        try waitForStatus(until)
    }

    /// Runs `command` with `sh` in the host namespace, in the working directory, reachctl on the
    /// PATH and REACHD_SOCKET set, stderr with stdout; in a session of its own so that an
    /// interrupt reaches every process of a pipeline, with no signal blocked or ignored that a
    /// shell would have.
    func start(_ command: String) throws -> Child {
        guard let daemon else { throw SetupError("no daemon") }
        // Foundation may have made the child a process group leader already (setsid then fails):
        // either way its pid is its group's.
        let shim = "import os, signal, sys\nsignal.pthread_sigmask(signal.SIG_SETMASK, [])\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
            + "if os.getpgid(0) != os.getpid(): os.setsid()\nos.execvp(sys.argv[1], sys.argv[1:])\n"
        var environment = ProcessInfo.processInfo.environment
        environment["REACHD_SOCKET"] = daemon.socketPath
        environment["PATH"] = Binaries.directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["NO_COLOR"] = "1"
        return try Child("/usr/bin/python3", ["-c", shim, ipCommand, "netns", "exec", host.name,
                                              "/bin/sh", "-c", "cd '\(work)' && exec 2>&1 && \(command)"], environment: environment)
    }
}

/// Runs one example block and returns what is wrong with it (nothing when it shows the truth).
enum ExampleRunner {
    static func run(_ example: DocumentationExample) -> [String] {
        guard let mark = example.scenario else { return [] }
        let names = ExampleScenario.names(mark)
        var stages: [String: ExampleStage] = [:]
        defer { for stage in stages.values { stage.destroy() } }
        func stage(_ index: Int) throws -> (ExampleStage, ExampleScenario) {
            let name = names[min(index, names.count - 1)]
            guard let scenario = ExampleScenario.all[name] else { throw SetupError("no scenario \(name)") }
            if let made = stages[name] { return (made, scenario) }
            let made = try ExampleStage()
            stages[name] = made
            try scenario.setup(made)
            return (made, scenario)
        }
        do {
            switch example.language {
            case "python": return try runPython(example, stage(0))
            case "sh": return try runLines(example, stage(0))
            default: return try runTranscript(example, stage)
            }
        } catch {
            return ["\(example): set-up failed: \(error)"]
        }
    }

    /// A console transcript, command by command.
    static func runTranscript(_ example: DocumentationExample, _ stage: (Int) throws -> (ExampleStage, ExampleScenario)) throws -> [String] {
        var problems: [String] = []
        for (index, step) in example.steps.enumerated() {
            let (machine, scenario) = try stage(index)
            if let file = step.command.wholeMatch(of: #/cat (\S+)\s*(#.*)?/#)?.output.1 {
                // An example that shows a file first makes it.
                try (step.expected.joined(separator: "\n") + "\n").write(toFile: machine.work + "/" + file, atomically: true, encoding: .utf8)
            }
            let stopAfter: Int? = step.endsWithEllipsis ? step.expected.count - 1 : (step.runsUntilInterrupted ? step.expected.count : nil)
            let output = try perform(step.command, on: machine, story: scenario.stories[step.command] ?? [], stopAfter: stopAfter)
            if !DocumentationExamples.matches(expected: step.expected, actual: output) {
                problems.append("\(example) `$ \(step.command)` prints something else:\n" + DocumentationExamples.difference(expected: step.expected, actual: output))
            }
        }
        return problems
    }

    /// Shell lines that each stand alone: all run at once, each checked against the output the
    /// scenario gives for it.
    static func runLines(_ example: DocumentationExample, _ setup: (ExampleStage, ExampleScenario)) throws -> [String] {
        let (machine, scenario) = setup
        let lines = example.body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        let results = lines.map { line in
            Thread.detachNewThreadWithResult { () -> String? in
                guard let expected = scenario.outputs[line] else { return "\(example) `\(line)`: the scenario says nothing of its output" }
                // A line that runs until interrupted gets 3 s: what it prints may sit in a
                // pipe's buffer until then (jq).
                let stopAfterSeconds: TimeInterval? = ConsoleStep(command: line, expected: expected).runsUntilInterrupted ? 3 : nil
                do {
                    var output = try perform(line, on: machine, story: scenario.stories[line] ?? [], stopAfter: nil,
                                             stopAfterSeconds: stopAfterSeconds, settle: 0)
                    output += ["sync.sh"].compactMap { try? String(contentsOfFile: machine.work + "/\($0).ran", encoding: .utf8) }
                        .filter { _ in line.contains("./sync.sh") }.map { $0.trimmingCharacters(in: .newlines) }
                    return DocumentationExamples.matches(expected: expected, actual: output) ? nil
                        : "\(example) `\(line)`:\n" + DocumentationExamples.difference(expected: expected, actual: output)
                } catch {
                    return "\(example) `\(line)`: \(error)"
                }
            }
        }
        return results.compactMap { $0.wait() ?? nil }
    }

    /// The python client, as shown but for the socket path, which becomes the test daemon's.
    static func runPython(_ example: DocumentationExample, _ setup: (ExampleStage, ExampleScenario)) throws -> [String] {
        let (machine, scenario) = setup
        let systemSocket = "/run/reachd/io.reachd.Reachability"
        let source = example.body.joined(separator: "\n") + "\n"
        guard source.components(separatedBy: systemSocket).count == 2, let socket = machine.daemon?.socketPath else {
            return ["\(example): the python example does not name \(systemSocket) once"]
        }
        let path = machine.work + "/example.py"
        try source.replacingOccurrences(of: systemSocket, with: socket).write(toFile: path, atomically: true, encoding: .utf8)
        let expected = scenario.outputs["python"] ?? []
        let output = try perform("\(Binaries.python) -u \(path)", on: machine, story: scenario.stories["python"] ?? [], stopAfter: expected.count)
        return DocumentationExamples.matches(expected: expected, actual: output) ? []
            : ["\(example) (python):\n" + DocumentationExamples.difference(expected: expected, actual: output)]
    }

    /// The child's process group, once it leads one of its own (the shim's first act): never the
    /// test's.
    static func ownGroup(_ child: Child) -> pid_t? {
        let pid = child.pid
        return pid > 1 && getpgid(pid) == pid ? pid : nil
    }

    /// Ctrl-C as it matters here: SIGINT to the command's reachctl (a pipeline behind it then
    /// reads the end of its input and ends, its buffered output written), or, without one (the
    /// python client), SIGTERM to its process group.
    static func interrupt(_ child: Child) {
        guard let group = ownGroup(child) else { return }
        let signalled = (try? sh("pkill -INT -g \(group) -x reachctl", check: false).status) == 0
        if !signalled { kill(-group, SIGTERM) }
    }

    /// Runs `command` on `machine`, playing `story` as its lines come; interrupts it (`interrupt`)
    /// `settle` after it has printed `stopAfter` lines (or, without that, `stopAfterSeconds`
    /// after its start), else waits for its end.
    static func perform(_ command: String, on machine: ExampleStage, story: [StoryStep], stopAfter: Int?,
                        stopAfterSeconds: TimeInterval? = nil, settle: TimeInterval = 0.5, timeout: TimeInterval = 30) throws -> [String] {
        let started = Date()
        let child = try machine.start(command)
        var pending = story[...]
        let deadline = Date().addingTimeInterval(timeout)
        var interrupted = false
        while Date() < deadline {
            let count = child.lines.count
            while let step = pending.first, count >= step.afterLines {
                pending = pending.dropFirst()
                try step.action(machine)
            }
            if !child.isRunning { break }
            let waited = stopAfterSeconds.map { Date() >= started.addingTimeInterval($0) } ?? false
            if (stopAfter.map { count >= $0 } ?? waited) && pending.isEmpty && (stopAfter != nil || stopAfterSeconds != nil) {
                Thread.sleep(forTimeInterval: settle)
                interrupt(child)
                interrupted = true
                break
            }
            usleep(10_000)
        }
        if child.isRunning && !interrupted, let group = ownGroup(child) { kill(-group, SIGKILL) }
        child.wait(timeout: 10)
        if !pending.isEmpty || (child.isRunning && !interrupted) {
            throw SetupError("`\(command)` printed \(child.lines.count) lines in \(Int(timeout)) s and its story did not finish: \(child.lines) \(child.stderr)")
        }
        if !child.stderr.isEmpty { throw SetupError("`\(command)`: \(child.stderr)") }
        return child.lines
    }
}
