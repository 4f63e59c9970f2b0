import ReachabilityCore

/// The daemon's command line: `reachd [--config FILE] [--socket PATH] [--log-level LEVEL]
/// [--check-config] [--version] [--help]`.
public struct DaemonOptions: Equatable, Sendable {
    public var configPath: String?
    public var socketPath: String?
    public var logLevel: LogLevel?
    public var checkConfig = false
    public var showVersion = false
    public var showHelp = false

    public init() {}

    public static let usage = """
    Usage: reachd [OPTIONS]

    Watches the network and tells local apps about its reachability over varlink.

    Options:
      --config FILE       read FILE instead of /etc/reachd/reachd.conf (+ reachd.conf.d/*.conf)
      --socket PATH       listen on PATH (default: $REACHD_SOCKET, /run/reachd/io.reachd.Reachability,
                          or $XDG_RUNTIME_DIR/reachd/io.reachd.Reachability when /run/reachd is not writable)
      --log-level LEVEL   debug, info, notice, warning or error (default: info)
      --check-config      check the configuration, print what is wrong, and exit
      --version           print the version and exit
      --help              print this help and exit
    """

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws -> DaemonOptions {
        var options = DaemonOptions()
        var scanner = ArgumentScanner(arguments)
        while let token = scanner.next() {
            switch token {
            case .positional(let argument):
                throw ArgumentError.unexpectedArgument(argument)
            case .option(let name):
                switch name {
                case "--config", "-c": options.configPath = try scanner.value(for: name)
                case "--socket": options.socketPath = try scanner.value(for: name)
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
