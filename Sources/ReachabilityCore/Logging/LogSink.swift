/// Where every component writes its log: the monitor, ModemManager, the connectivity check, the
/// varlink server. One sink per process (reachd's writes to stderr or the journal, see
/// `LogSink.standardError` in ReachabilityHost); each component takes it as a parameter, so
/// `--log-level` applies to all of them and tests can record what a component logs.
///
/// The sink drops lines below its `threshold` before the message is even built.
public struct LogSink: Sendable {
    /// The least severe level written.
    public let threshold: LogLevel
    private let write: @Sendable (LogLevel, String) -> Void

    /// - Parameter write: takes every line at `threshold` or above; may be called from any thread.
    public init(threshold: LogLevel, write: @escaping @Sendable (_ level: LogLevel, _ message: String) -> Void) {
        self.threshold = threshold
        self.write = write
    }

    /// A sink that writes nothing.
    public static let discarding = LogSink(threshold: .error) { _, _ in }

    /// Writes `message` at `level` unless `level` is below the threshold.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= threshold else { return }
        write(level, message())
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
