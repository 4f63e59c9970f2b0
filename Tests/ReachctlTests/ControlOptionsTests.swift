import Foundation
import Testing
@testable import reachctl
import ReachabilityCore

@Suite struct ControlArgumentsTests {
    @Test(arguments: [
        (["status"], ControlOptions(command: .status(json: false))),
        (["status", "--json"], ControlOptions(command: .status(json: true))),
        (["status", "--verbose"], ControlOptions(command: .status(json: false, verbose: true))),
        (["--socket", "/tmp/s", "status"], ControlOptions(socketPath: "/tmp/s", command: .status(json: false))),
        (["status", "--socket=/tmp/s"], ControlOptions(socketPath: "/tmp/s", command: .status(json: false))),
        (["monitor"], ControlOptions(command: .monitor(json: false, after: nil, statusOnly: false))),
        (["monitor", "--json", "--after", "42", "--status-only"], ControlOptions(command: .monitor(json: true, after: 42, statusOnly: true))),
        (["monitor", "--changes", "status,connectivity"], ControlOptions(command: .monitor(json: false, after: nil, statusOnly: false, changes: ["status", "connectivity"]))),
        (["monitor", "--changes=probe", "--status-only"], ControlOptions(command: .monitor(json: false, after: nil, statusOnly: true, changes: ["probe"]))),
        (["wait", "--stable", "5", "--internet"], ControlOptions(command: .wait(timeout: 30, internet: true, interface: nil, quiet: false, stable: 5))),
        (["wait", "--stable=0.5"], ControlOptions(command: .wait(timeout: 30, internet: false, interface: nil, quiet: false, stable: 0.5))),
        (["wait"], ControlOptions(command: .wait(timeout: 30, internet: false, interface: nil, quiet: false))),
        (["wait", "--internet", "--family", "ipv6"],
         ControlOptions(command: .wait(timeout: 30, internet: true, interface: nil, quiet: false, family: .ipv6))),
        (["wait", "--timeout", "0", "--internet", "--interface", "eth0", "-q"], ControlOptions(command: .wait(timeout: 0, internet: true, interface: "eth0", quiet: true))),
        (["wait", "--timeout=2.5"], ControlOptions(command: .wait(timeout: 2.5, internet: false, interface: nil, quiet: false))),
        (["wait", "--quality", "moderate"],
         ControlOptions(command: .wait(timeout: 30, internet: false, interface: nil, quiet: false, quality: .moderate))),
        (["wait", "--quality=good", "--stable", "5"],
         ControlOptions(command: .wait(timeout: 30, internet: false, interface: nil, quiet: false, stable: 5, quality: .good))),
        (["check", "example.com", "--port", "443", "--json", "--watch"], ControlOptions(command: .check(host: "example.com", port: 443, json: true, watch: true))),
        (["check", "--", "-odd-host"], ControlOptions(command: .check(host: "-odd-host", port: nil, json: false, watch: false))),
        (["probe", "--json"], ControlOptions(command: .probe(json: true))),
        (["--help"], ControlOptions(command: .help(command: nil))),
        (["wait", "--help"], ControlOptions(command: .help(command: "wait"))),
        (["--version"], ControlOptions(command: .version)),
    ])
    func parses(arguments: [String], expected: ControlOptions) throws {
        #expect(try ControlOptions.parse(arguments) == expected)
    }

    @Test(arguments: [
        ([], ArgumentError.missingCommand),
        (["frobnicate"], ArgumentError.unknownCommand("frobnicate")),
        (["status", "--after", "3"], ArgumentError.unknownOption("--after")),
        (["status", "extra"], ArgumentError.unexpectedArgument("extra")),
        (["monitor", "--after", "x"], ArgumentError.invalidValue(option: "--after", value: "x", expected: "an integer in 0…\(Int.max)")),
        (["wait", "--timeout", "-1"], ArgumentError.invalidValue(option: "--timeout", value: "-1", expected: "seconds, 0 = forever")),
        (["wait", "--family", "ipx"], ArgumentError.invalidValue(option: "--family", value: "ipx", expected: "ipv4 or ipv6")),
        (["wait", "--timeout"], ArgumentError.missingValue(option: "--timeout")),
        (["check"], ArgumentError.missingArgument("HOST")),
        (["check", "h", "--port", "0"], ArgumentError.invalidValue(option: "--port", value: "0", expected: "an integer in 1…65535")),
        (["status", "--nope"], ArgumentError.unknownOption("--nope")),
        (["monitor", "--changes", "status,since"], ArgumentError.invalidValue(option: "--changes", value: "status,since", expected: "Status fields among \(Status.Field.allCases.map(\.rawValue).joined(separator: ","))")),
        (["monitor", "--changes", ""], ArgumentError.invalidValue(option: "--changes", value: "", expected: "Status fields among \(Status.Field.allCases.map(\.rawValue).joined(separator: ","))")),
        (["wait", "--stable", "0"], ArgumentError.invalidValue(option: "--stable", value: "0", expected: "seconds above 0, at most 86400")),
        (["status", "--stable", "3"], ArgumentError.unknownOption("--stable")),
        (["wait", "--quality", "fast"], ArgumentError.invalidValue(option: "--quality", value: "fast", expected: "minimal, moderate or good")),
        // Every path is at least unknown: waiting for it would wait for nothing.
        (["wait", "--quality", "unknown"], ArgumentError.invalidValue(option: "--quality", value: "unknown", expected: "minimal, moderate or good")),
        (["status", "--quality", "good"], ArgumentError.unknownOption("--quality")),
    ])
    func usageErrors(arguments: [String], expected: ArgumentError) {
        #expect(throws: expected) { try ControlOptions.parse(arguments) }
    }
}

@Suite struct SimulateArgumentsTests {
    @Test(arguments: [
        (["simulate", "wwan2G"], SimulateCommand.play(status: .wwan2G, connectivity: nil, expensive: false, seconds: nil)),
        (["simulate", "wifi", "--connectivity", "portal", "--expensive", "--for", "30"],
         .play(status: .wifi, connectivity: .portal, expensive: true, seconds: 30)),
        (["simulate", "--for=5", "notReachable"], .play(status: .notReachable, connectivity: nil, expensive: false, seconds: 5)),
        (["simulate", "notReachable", "--connectivity", "none"], .play(status: .notReachable, connectivity: Connectivity.none, expensive: false, seconds: nil)),
        (["simulate", "--reset"], .reset),
        (["simulate", "--script", "train.txt"], .script(path: "train.txt")),
    ] as [([String], SimulateCommand)])
    func parses(_ arguments: [String], _ expected: SimulateCommand) throws {
        #expect(try ControlOptions.parse(arguments) == ControlOptions(command: .simulate(expected)))
    }

    @Test(arguments: [
        (["simulate"], ArgumentError.missingArgument("STATUS (or --reset, --script FILE)")),
        (["simulate", "wwan6G"], ArgumentError.invalidValue(option: "STATUS", value: "wwan6G", expected: NetworkStatus.allCases.map(\.rawValue).joined(separator: ", "))),
        (["simulate", "wifi", "--for", "-3"], ArgumentError.invalidValue(option: "--for", value: "-3", expected: "seconds, 1…86400")),
        (["simulate", "wifi", "--for", "0"], ArgumentError.invalidValue(option: "--for", value: "0", expected: "seconds, 1…86400")),
        (["simulate", "wifi", "--connectivity", "great"], ArgumentError.invalidValue(option: "--connectivity", value: "great", expected: Connectivity.allCases.map(\.rawValue).joined(separator: ", "))),
        (["simulate", "wifi", "--connectivity", "none"], ArgumentError.invalidValue(option: "--connectivity", value: "none", expected: "unknown, portal, limited or full for a reachable status")),
        (["simulate", "notReachable", "--expensive"], ArgumentError.invalidValue(option: "--expensive", value: "notReachable", expected: "a reachable status")),
        (["simulate", "--reset", "wifi"], ArgumentError.unexpectedArgument("wifi")),
        (["simulate", "--reset", "--for", "3"], ArgumentError.unexpectedArgument("--for with --reset")),
        (["simulate", "--script", "f", "--expensive"], ArgumentError.unexpectedArgument("--expensive with --script")),
        (["simulate", "wifi", "wwan"], ArgumentError.unexpectedArgument("wwan")),
        (["simulate", "wifi", "--json"], ArgumentError.unknownOption("--json")),
        (["status", "--expensive"], ArgumentError.unknownOption("--expensive")),
    ] as [([String], ArgumentError)])
    func usageErrors(_ arguments: [String], _ expected: ArgumentError) {
        #expect(throws: expected) { try ControlOptions.parse(arguments) }
    }
}

@Suite struct SimulationScriptTests {
    @Test(arguments: [
        ("wifi 5", [SimulationScript.Step(status: .wifi, seconds: 5, line: 1)]),
        ("# a train\n\nwifi full 10\n  wwan2G limited 15   # tunnel\nnotReachable 3\r\nnotReachable none 2\n",
         [SimulationScript.Step(status: .wifi, connectivity: .full, seconds: 10, line: 3),
          SimulationScript.Step(status: .wwan2G, connectivity: .limited, seconds: 15, line: 4),
          SimulationScript.Step(status: .notReachable, seconds: 3, line: 5),
          SimulationScript.Step(status: .notReachable, connectivity: Connectivity.none, seconds: 2, line: 6)]),
        ("\twwan5G\tportal\t1", [SimulationScript.Step(status: .wwan5G, connectivity: .portal, seconds: 1, line: 1)]),
    ] as [(String, [SimulationScript.Step])])
    func parses(_ text: String, _ steps: [SimulationScript.Step]) throws {
        #expect(try SimulationScript.parse(text).steps == steps)
    }

    @Test(arguments: [
        ("wifi 5\nwifii 5\n", 2, "unknown status \"wifii\""),
        ("wifi -1", 1, "-1 seconds is not between 1"),
        ("wifi 0", 1, "0 seconds is not between 1"),
        ("wifi 1.5", 1, "\"1.5\" is not a number"),
        ("wifi", 1, "expected STATUS [CONNECTIVITY] SECONDS, found 1 word"),
        ("wifi full 5 extra", 1, "found 4 words"),
        ("# nothing\n\n", 3, "no step"),
        ("", 1, "no step"),
        ("wifi great 5", 1, "unknown connectivity \"great\""),
        ("wifi none 5", 1, "connectivity none means not reachable"),
        ("notReachable full 5", 1, "notReachable has connectivity none"),
    ] as [(String, Int, String)])
    func rejects(_ text: String, _ line: Int, _ message: String) {
        do {
            _ = try SimulationScript.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.message.contains(message), "\(error)")
            #expect(error.description.hasPrefix("line \(line): "))
        }
    }
}

/// What reachctl says when no daemon answers: every path it tried, a stale socket told from a
/// missing one, and how to start reachd.
@Suite struct NotRunningMessageTests {
    @Test(arguments: [
        ([("/run/reachd/io.reachd.Reachability", false)],
         "reachd is not running (no socket at /run/reachd/io.reachd.Reachability)"),
        ([("/run/reachd/io.reachd.Reachability", false), ("/run/user/1000/reachd/io.reachd.Reachability", false)],
         "reachd is not running (no socket at /run/reachd/io.reachd.Reachability, nor at /run/user/1000/reachd/io.reachd.Reachability)"),
        ([("/tmp/s", true)],
         "reachd is not running (/tmp/s is a stale socket: it exists, nobody listens on it)"),
        ([("/run/reachd/io.reachd.Reachability", true), ("/run/user/1000/reachd/io.reachd.Reachability", false)],
         "reachd is not running (no socket at /run/user/1000/reachd/io.reachd.Reachability; /run/reachd/io.reachd.Reachability is a stale socket: it exists, nobody listens on it)"),
    ] as [([(String, Bool)], String)])
    func message(_ tried: [(String, Bool)], _ first: String) {
        #expect(NotRunning.message(tried.map { (path: $0.0, exists: $0.1) }) == first)
        #expect(NotRunning.hint == "start it with 'systemctl start reachd.socket', or with 'make run' in its source tree")
    }
}

/// What people see: `--help` names every exit status reachctl uses, and the status line's
/// colours (only when colour is on).
@Suite struct ReachctlOutputTests {
    @Test(arguments: [
        (ExitCode.success, "0   success"), (ExitCode.failure, "1   wait timed out"), (ExitCode.usage, "2   usage error"),
        (ExitCode.unavailable, "69  reachd does not answer"), (ExitCode.permissionDenied, "77  simulate: not allowed"),
    ])
    func helpListsExitStatus(_ code: Int32, _ line: String) {
        #expect(line.hasPrefix(String(code)))
        #expect(ControlOptions.usage.contains("\n  " + line), "\(line)")
    }

    @Test func helpNamesProbesExitStatus() {
        #expect(ControlOptions.usage.contains("probe: the check is off"))
    }

    static func status(_ connectivity: Connectivity) -> Status {
        let eth0 = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                             addresses: ["10.0.0.2/24"], metered: false)
        return Status(status: .ethernet, reachable: true, connectivity: connectivity, primary: eth0, vpn: nil, cellular: nil,
                      expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.0.1"], flags: [.reachable],
                      interfaces: [eth0], probe: nil, since: Date(timeIntervalSince1970: 0), ipv4Connectivity: connectivity)
    }

    @Test(arguments: [
        (Connectivity.full, "\u{1B}[32monline\u{1B}[0m · ethernet (eth0) · internet: full · IPv4"),
        (.portal, "\u{1B}[32monline\u{1B}[0m · ethernet (eth0) · internet: \u{1B}[33mportal\u{1B}[0m · IPv4"),
        (.limited, "\u{1B}[32monline\u{1B}[0m · ethernet (eth0) · internet: \u{1B}[33mlimited\u{1B}[0m · IPv4"),
        (.unknown, "\u{1B}[32monline\u{1B}[0m · ethernet (eth0) · internet: unknown · IPv4"),
    ])
    func statusColours(_ connectivity: Connectivity, _ painted: String) {
        let status = Self.status(connectivity)
        #expect(Style(enabled: true).summary(status) == painted)
        #expect(Style(enabled: false).summary(status) == "online · ethernet (eth0) · internet: \(connectivity.rawValue) · IPv4")
        // NO_COLOR (any value) and a dumb terminal turn colour off whatever the terminal.
        #expect(!Style(environment: ["NO_COLOR": "1"]).enabled)
        #expect(!Style(environment: ["TERM": "dumb"]).enabled)
    }
}
