/// Severity of a log line, with its sd-daemon (syslog) priority. reachd's `--log-level` names
/// the least severe level written.
public enum LogLevel: String, CaseIterable, Comparable, Sendable {
    case debug, info, notice, warning, error

    /// The `<N>` prefix value of sd-daemon(3).
    public var priority: Int {
        switch self {
        case .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.priority > b.priority }
}
