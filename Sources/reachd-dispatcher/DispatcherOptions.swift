import ReachabilityCore

/// `reachd-dispatcher`'s command line.
public struct DispatcherOptions: Equatable, Sendable {
    public var configPath: String?
    public var socketPath: String?
    /// Where the progress file lives; nil: `$RUNTIME_DIRECTORY` (systemd's `RuntimeDirectory=`),
    /// else `/run/reachd-dispatcher`.
    public var stateDirectory: String?
    /// Replaces `[Scripts] Directories=` (repeatable).
    public var scriptDirectories: [String] = []
    /// The `systemctl` that starts and stops the targets.
    public var systemctl = "systemctl"
    public var logLevel: LogLevel?
    public var checkConfig = false
    public var showVersion = false
    public var showHelp = false

    public init() {}

    public static let defaultStateDirectory = "/run/reachd-dispatcher"

    public static let usage = """
    Usage: reachd-dispatcher [OPTIONS]

    Follows reachd's events: starts and stops reachd-online.target, reachd-internet.target and
    reachd-unmetered.target, and runs the scripts in /etc/reachd/dispatcher.d and
    /usr/lib/reachd/dispatcher.d. See reachd-dispatcher(8).

    Options:
      --config FILE        read FILE instead of /etc/reachd/dispatcher.conf (+ dispatcher.conf.d/*.conf)
      --socket PATH        reachd's socket (default: $REACHD_SOCKET, /run/reachd/io.reachd.Reachability)
      --state-dir DIR      keep the progress file in DIR (default: $RUNTIME_DIRECTORY, /run/reachd-dispatcher)
      --script-dir DIR     look for scripts in DIR instead of [Scripts] Directories= (repeatable)
      --systemctl PATH     the systemctl to start and stop targets with (default: systemctl)
      --log-level LEVEL    debug, info, notice, warning or error (default: info)
      --check-config       check the configuration, print what is wrong, and exit
      --version            print the version and exit
      --help               print this help and exit
    """

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws -> DispatcherOptions {
        var options = DispatcherOptions()
        var scanner = ArgumentScanner(arguments)
        func absolute(_ name: String, _ value: String) throws -> String {
            guard value.hasPrefix("/") else { throw ArgumentError.invalidValue(option: name, value: value, expected: "an absolute path") }
            return value
        }
        while let token = scanner.next() {
            switch token {
            case .positional(let argument):
                throw ArgumentError.unexpectedArgument(argument)
            case .option(let name):
                switch name {
                case "--config", "-c": options.configPath = try scanner.value(for: name)
                case "--socket": options.socketPath = try scanner.value(for: name)
                case "--state-dir": options.stateDirectory = try absolute(name, try scanner.value(for: name))
                case "--script-dir": options.scriptDirectories.append(try absolute(name, try scanner.value(for: name)))
                case "--systemctl": options.systemctl = try scanner.value(for: name)
                case "--log-level": options.logLevel = try scanner.logLevel(for: name)
                case "--check-config": try scanner.noValue(for: name); options.checkConfig = true
                case "--version": try scanner.noValue(for: name); options.showVersion = true
                case "--help", "-h": try scanner.noValue(for: name); options.showHelp = true
                default: throw ArgumentError.unknownOption(name)
                }
            }
        }
        return options
    }
}
