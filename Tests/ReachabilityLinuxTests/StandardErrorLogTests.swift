import ReachabilityCore
import ReachabilityLinux
import Testing

@Suite struct StandardErrorLogTests {
    /// On a terminal or a file: `reachd: ` and the level for warnings and errors.
    @Test func plainLines() {
        #expect(LogSink.standardErrorLine(.info, "listening on /run/x", journal: false) == "reachd: listening on /run/x")
        #expect(LogSink.standardErrorLine(.debug, "d", journal: false) == "reachd: d")
        #expect(LogSink.standardErrorLine(.warning, "w", journal: false) == "reachd: warning: w")
        #expect(LogSink.standardErrorLine(.error, "e", journal: false) == "reachd: error: e")
    }

    /// To the journal: the sd-daemon(3) priority prefix and nothing else.
    @Test func journalLines() {
        #expect(LogSink.standardErrorLine(.error, "e", journal: true) == "<3>e")
        #expect(LogSink.standardErrorLine(.notice, "n", journal: true) == "<5>n")
        #expect(LogSink.standardErrorLine(.debug, "d", journal: true) == "<7>d")
    }

    @Test func thresholdFromTheCommandLine() {
        #expect(LogSink.standardError(threshold: .warning, environment: [:]).threshold == .warning)
    }
}
