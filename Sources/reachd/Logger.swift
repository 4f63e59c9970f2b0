import Foundation
import ReachabilityCore
import ReachabilitySystem

/// reachd's log: one plain line per message on stderr, or with sd-daemon(3) priority prefixes
/// (`<6>listening on …`) when stderr goes to the journal (systemd sets JOURNAL_STREAM).
final class Logger: @unchecked Sendable {
    private let lock = NSLock()
    private var threshold: LogLevel
    let journal: Bool

    init(threshold: LogLevel = .info, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.threshold = threshold
        self.journal = !(environment["JOURNAL_STREAM"] ?? "").isEmpty
    }

    var level: LogLevel {
        get { lock.withLock { threshold } }
        set { lock.withLock { threshold = newValue } }
    }

    /// The line as written (without newline): `<N>message` for the journal, `reachd: message` otherwise.
    func format(_ level: LogLevel, _ message: String) -> String {
        journal ? "<\(level.priority)>\(message)" : "reachd: \(level >= .warning ? "\(level.rawValue): " : "")\(message)"
    }

    func log(_ level: LogLevel, _ message: String) {
        guard level >= self.level else { return }
        // One write(2) per line, so lines from several threads never interleave.
        let line = format(level, message) + "\n"
        lock.withLock { StandardStream.error.write(line) }
    }

    func debug(_ message: String) { log(.debug, message) }
    func info(_ message: String) { log(.info, message) }
    func notice(_ message: String) { log(.notice, message) }
    func warning(_ message: String) { log(.warning, message) }
    func error(_ message: String) { log(.error, message) }
}
