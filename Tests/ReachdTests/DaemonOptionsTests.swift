import Testing
@testable import reachd
import ReachabilityCore

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
}
