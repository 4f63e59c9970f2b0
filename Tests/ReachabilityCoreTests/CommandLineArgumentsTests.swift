import Testing
@testable import ReachabilityCore

@Suite struct DaemonArgumentsTests {
    @Test func defaults() throws {
        #expect(try DaemonOptions.parse([]) == DaemonOptions())
    }

    @Test func everyOption() throws {
        let options = try DaemonOptions.parse(["--config", "/etc/x.conf", "--socket=/tmp/s", "--log-level", "DEBUG", "--check-config"])
        #expect(options.configPath == "/etc/x.conf")
        #expect(options.socketPath == "/tmp/s")
        #expect(options.logLevel == .debug)
        #expect(options.checkConfig && !options.showHelp && !options.showVersion)
        #expect(try DaemonOptions.parse(["--version"]).showVersion)
        #expect(try DaemonOptions.parse(["-h"]).showHelp)
    }

    @Test(arguments: [
        (["--bogus"], ArgumentError.unknownOption("--bogus")),
        (["--socket"], ArgumentError.missingValue(option: "--socket")),
        (["--log-level", "loud"], ArgumentError.invalidValue(option: "--log-level", value: "loud", expected: "debug, info, notice, warning, error")),
        (["extra"], ArgumentError.unexpectedArgument("extra")),
        (["--version=1"], ArgumentError.invalidValue(option: "--version", value: "1", expected: "no value")),
    ])
    func usageErrors(arguments: [String], expected: ArgumentError) {
        #expect(throws: expected) { try DaemonOptions.parse(arguments) }
    }

    @Test func logLevelsOrderAndPriorities() {
        #expect(LogLevel.debug < LogLevel.info && LogLevel.warning < LogLevel.error)
        #expect(LogLevel.allCases.map(\.priority) == [7, 6, 5, 4, 3])
    }
}

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
        (["wait", "--timeout", "0", "--internet", "--interface", "eth0", "-q"], ControlOptions(command: .wait(timeout: 0, internet: true, interface: "eth0", quiet: true))),
        (["wait", "--timeout=2.5"], ControlOptions(command: .wait(timeout: 2.5, internet: false, interface: nil, quiet: false))),
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
        (["wait", "--timeout"], ArgumentError.missingValue(option: "--timeout")),
        (["check"], ArgumentError.missingArgument("HOST")),
        (["check", "h", "--port", "0"], ArgumentError.invalidValue(option: "--port", value: "0", expected: "an integer in 1…65535")),
        (["status", "--nope"], ArgumentError.unknownOption("--nope")),
        (["monitor", "--changes", "status,since"], ArgumentError.invalidValue(option: "--changes", value: "status,since", expected: "Status fields among \(Status.Field.allCases.map(\.rawValue).joined(separator: ","))")),
        (["monitor", "--changes", ""], ArgumentError.invalidValue(option: "--changes", value: "", expected: "Status fields among \(Status.Field.allCases.map(\.rawValue).joined(separator: ","))")),
        (["wait", "--stable", "0"], ArgumentError.invalidValue(option: "--stable", value: "0", expected: "seconds above 0, at most 86400")),
        (["status", "--stable", "3"], ArgumentError.unknownOption("--stable")),
    ])
    func usageErrors(arguments: [String], expected: ArgumentError) {
        #expect(throws: expected) { try ControlOptions.parse(arguments) }
    }
}
