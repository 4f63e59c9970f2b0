import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

extension LogSink {
    /// The log of reachd and reachd-dispatcher: one plain line per message on stderr
    /// (`reachd: message`, with the level for warnings and errors), or with sd-daemon(3)
    /// priority prefixes (`<6>listening on …`) when stderr goes to the journal (systemd sets
    /// JOURNAL_STREAM).
    ///
    /// - Parameter program: the name that starts each plain line (`reachd`, `reachd-dispatcher`).
    public static func standardError(threshold: LogLevel = .info, program: String = "reachd",
                                     environment: [String: String] = ProcessInfo.processInfo.environment) -> LogSink {
        let journal = !(environment["JOURNAL_STREAM"] ?? "").isEmpty
        return LogSink(threshold: threshold) { level, message in
            var line = standardErrorLine(level, message, journal: journal, program: program)
            line += "\n"
            standardErrorWriter.write(line)
        }
    }

    /// The line as written (without newline): `<N>message` for the journal, `reachd: message` otherwise.
    /// Control characters in the message (from an interface's name, a client, a server) are
    /// written as escapes (`TerminalText`): one message stays one line, and nothing in it
    /// reaches a terminal or the journal's reader raw.
    public static func standardErrorLine(_ level: LogLevel, _ message: String, journal: Bool, program: String = "reachd") -> String {
        // One string, with room for the newline the sink adds: no part made on its own.
        var line = ""
        line.reserveCapacity(message.utf8.count + program.utf8.count + 16)
        if journal {
            line += "<"
            line += String(level.priority)
            line += ">"
        } else {
            line += program
            line += ": "
            if level >= .warning {
                line += level.rawValue
                line += ": "
            }
        }
        line += TerminalText.escaped(message)
        return line
    }
}

/// The one writer every sink shares, so that lines of all of them never interleave.
private let standardErrorWriter = StandardErrorWriter()

/// Writes whole lines to stderr: one write(2) per line, under a lock, so that lines from several
/// threads never interleave.
private final class StandardErrorWriter: Sendable {
    private let lock = Mutex(())

    func write(_ line: String) {
        lock.withLock { _ in StandardStream.error.write(line) }
    }
}
