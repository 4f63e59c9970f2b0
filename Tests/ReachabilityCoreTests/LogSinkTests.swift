import Synchronization
import Testing
import ReachabilityCore

@Suite struct LogSinkTests {
    @Test func logLevelsOrderAndPriorities() {
        #expect(LogLevel.debug < LogLevel.info && LogLevel.warning < LogLevel.error)
        #expect(LogLevel.allCases.map(\.priority) == [7, 6, 5, 4, 3])
    }

    /// Lines at the threshold or above reach the writer with their level; lines below it are
    /// dropped before their message is built.
    @Test func filtersByThresholdBeforeBuildingTheMessage() {
        let written = Mutex<[String]>([])
        let built = Mutex(0)
        let sink = LogSink(threshold: .notice) { level, message in written.withLock { $0.append("\(level) \(message)") } }
        func message(_ text: String) -> String { built.withLock { $0 += 1 }; return text }
        sink.debug(message("d"))
        sink.info(message("i"))
        sink.notice(message("n"))
        sink.warning(message("w"))
        sink.error(message("e"))
        sink.log(.info, message("i2"))
        sink.log(.error, message("e2"))
        #expect(written.withLock { $0 } == ["notice n", "warning w", "error e", "error e2"])
        #expect(built.withLock { $0 } == 4)
    }

    @Test func levelsOrderBySeverityAndCarryTheirSyslogPriority() {
        #expect(LogLevel.allCases.sorted() == [.debug, .info, .notice, .warning, .error])
        #expect(LogLevel.allCases.map(\.priority) == [7, 6, 5, 4, 3])
    }
}
