/// What `reachctl` was asked to do (DESIGN.md §4).
public enum ControlCommand: Equatable, Sendable {
    case status(json: Bool)
    /// `changes`: the `Status` field names of `--changes`; nil for every event.
    case monitor(json: Bool, after: Int?, statusOnly: Bool, changes: [String]? = nil)
    /// `timeout` in seconds; 0 waits forever. `stable`: seconds the condition must hold unchanged.
    case wait(timeout: Double, internet: Bool, interface: String?, quiet: Bool, stable: Double? = nil)
    case check(host: String, port: Int?, json: Bool, watch: Bool)
    case probe(json: Bool)
    /// `--help`, for the whole program or one command.
    case help(command: String?)
    case version
}

/// The `reachctl` command line: `reachctl [--socket PATH] COMMAND [OPTIONS]`; the common
/// options (`--socket`, `--help`, `--version`) go before or after the command.
public struct ControlOptions: Equatable, Sendable {
    public var socketPath: String?
    public var command: ControlCommand

    public init(socketPath: String? = nil, command: ControlCommand) {
        self.socketPath = socketPath; self.command = command
    }

    public static let commands = ["status", "monitor", "wait", "check", "probe"]

    public static let usage = """
    Usage: reachctl [--socket PATH] COMMAND [OPTIONS]

    Commands:
      status [--json]                         the current reachability
      monitor [--json] [--after SEQ] [--status-only] [--changes FIELD,…]
                                              one line per event, first the current state;
                                              --changes: only events changing these Status fields
      wait [--timeout SEC] [--internet] [--interface NAME] [--stable SEC] [-q]
                                              wait until reachable (default 30 s, 0 = forever);
                                              --stable: until it has held SEC s without a change
      check HOST [--port N] [--json] [--watch]
                                              how HOST is reached (route, interface, TCP connect)
      probe [--json]                          run the connectivity check now

    Options:
      --socket PATH   reachd's socket (default: $REACHD_SOCKET, /run/reachd/io.reachd.Reachability,
                      $XDG_RUNTIME_DIR/reachd/io.reachd.Reachability)
      --help          print help (also after a command)
      --version       print the version

    Exit status: 0 success (wait: condition met; check: reachable), 1 wait timed out or check
    unreachable, 2 usage error, 69 reachd is not running.
    """

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws -> ControlOptions {
        var scanner = ArgumentScanner(arguments)
        var socketPath: String?
        var commandName: String?
        var positionals: [String] = []
        var flags: [String: String?] = [:]      // option → value (nil for a flag)
        var order: [String] = []
        var help = false, version = false

        let valued: Set<String> = ["--after", "--timeout", "--interface", "--port", "--changes", "--stable"]
        let known = valued.union(["--json", "--status-only", "--internet", "-q", "--quiet", "--watch"])

        while let token = scanner.next() {
            switch token {
            case .positional(let argument):
                if commandName == nil { commandName = argument } else { positionals.append(argument) }
            case .option(let name):
                switch name {
                case "--socket": socketPath = try scanner.value(for: name)
                case "--help", "-h": try scanner.noValue(for: name); help = true
                case "--version": try scanner.noValue(for: name); version = true
                default:
                    guard known.contains(name) else { throw ArgumentError.unknownOption(name) }
                    if valued.contains(name) { flags[name] = .some(try scanner.value(for: name)) }
                    else { try scanner.noValue(for: name); flags[name] = .some(nil) }
                    order.append(name)
                }
            }
        }

        if help { return ControlOptions(socketPath: socketPath, command: .help(command: commandName)) }
        if version { return ControlOptions(socketPath: socketPath, command: .version) }
        guard let commandName else { throw ArgumentError.missingCommand }

        func flag(_ name: String) -> Bool { flags[name] != nil }
        func allow(_ names: Set<String>) throws {
            if let bad = order.first(where: { !names.contains($0) }) { throw ArgumentError.unknownOption(bad) }
        }
        func noPositionals() throws {
            if let extra = positionals.first { throw ArgumentError.unexpectedArgument(extra) }
        }
        func integer(_ name: String, range: ClosedRange<Int>) throws -> Int? {
            guard let value = flags[name] ?? nil else { return nil }
            guard let number = Int(value), range.contains(number) else {
                throw ArgumentError.invalidValue(option: name, value: value, expected: "an integer in \(range.lowerBound)…\(range.upperBound)")
            }
            return number
        }

        let command: ControlCommand
        switch commandName {
        case "status":
            try allow(["--json"]); try noPositionals()
            command = .status(json: flag("--json"))
        case "monitor":
            try allow(["--json", "--after", "--status-only", "--changes"]); try noPositionals()
            var changes: [String]?
            if let value = flags["--changes"] ?? nil {
                let names = value.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                guard SubscriptionFilter.fields(named: names) != nil else {
                    let known = Status.Field.allCases.map(\.rawValue).joined(separator: ",")
                    throw ArgumentError.invalidValue(option: "--changes", value: value, expected: "Status fields among \(known)")
                }
                changes = names
            }
            command = .monitor(json: flag("--json"), after: try integer("--after", range: 0...Int.max),
                               statusOnly: flag("--status-only"), changes: changes)
        case "wait":
            try allow(["--timeout", "--internet", "--interface", "--stable", "-q", "--quiet"]); try noPositionals()
            var timeout = 30.0
            if let value = flags["--timeout"] ?? nil {
                guard let seconds = Double(value), seconds >= 0, seconds.isFinite else {
                    throw ArgumentError.invalidValue(option: "--timeout", value: value, expected: "seconds, 0 = forever")
                }
                timeout = seconds
            }
            var stable: Double?
            if let value = flags["--stable"] ?? nil {
                guard let seconds = Double(value), seconds > 0, seconds.isFinite, seconds <= 86_400 else {
                    throw ArgumentError.invalidValue(option: "--stable", value: value, expected: "seconds above 0, at most 86400")
                }
                stable = seconds
            }
            command = .wait(timeout: timeout, internet: flag("--internet"), interface: flags["--interface"] ?? nil,
                            quiet: flag("-q") || flag("--quiet"), stable: stable)
        case "check":
            try allow(["--port", "--json", "--watch"])
            guard let host = positionals.first else { throw ArgumentError.missingArgument("HOST") }
            if positionals.count > 1 { throw ArgumentError.unexpectedArgument(positionals[1]) }
            command = .check(host: host, port: try integer("--port", range: 1...65535), json: flag("--json"), watch: flag("--watch"))
        case "probe":
            try allow(["--json"]); try noPositionals()
            command = .probe(json: flag("--json"))
        default:
            throw ArgumentError.unknownCommand(commandName)
        }
        return ControlOptions(socketPath: socketPath, command: command)
    }
}
