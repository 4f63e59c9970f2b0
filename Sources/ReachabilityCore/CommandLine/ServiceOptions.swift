/// The options every service of the project takes (`reachd`, `reachd-dispatcher`): one
/// configuration file, the socket, the log level, and the check, version and help switches.
public protocol ServiceOptions {
    var configPath: String? { get set }
    var socketPath: String? { get set }
    var logLevel: LogLevel? { get set }
    var checkConfig: Bool { get set }
    var showVersion: Bool { get set }
    var showHelp: Bool { get set }
}

extension ArgumentScanner {
    /// Takes `name` (and its value) when it is one of the options of `ServiceOptions`.
    /// - Returns: false when `name` is not one of them, for the caller's own options.
    public mutating func takeServiceOption(_ name: String, into options: inout some ServiceOptions) throws -> Bool {
        switch name {
        case "--config", "-c": options.configPath = try value(for: name)
        case "--socket": options.socketPath = try value(for: name)
        case "--log-level": options.logLevel = try logLevel(for: name)
        case "--check-config": try noValue(for: name); options.checkConfig = true
        case "--version": try noValue(for: name); options.showVersion = true
        case "--help", "-h": try noValue(for: name); options.showHelp = true
        default: return false
        }
        return true
    }
}
