import ReachabilityCore
import ReachabilityHost
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

    /// Control characters from outside (an interface's name) are written as escapes: one
    /// message, one line, nothing a terminal would obey.
    @Test func controlCharactersAreEscaped() {
        #expect(LogSink.standardErrorLine(.info, "#7 linkAdded e\u{1B}[2Jx: ethernet", journal: false) == #"reachd: #7 linkAdded e\x1b[2Jx: ethernet"#)
        #expect(LogSink.standardErrorLine(.warning, "a\nb", journal: true) == #"<4>a\x0ab"#)
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
