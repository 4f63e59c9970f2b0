import ReachabilityCore

/// What `reachctl` was asked to do (reachctl(1)).
public enum ControlCommand: Equatable, Sendable {
    /// `verbose`: also where each family's packets go and which rule and table decided.
    case status(json: Bool, verbose: Bool = false)
    /// `changes`: the `Status` field names of `--changes`; nil for every event.
    case monitor(json: Bool, after: Int?, statusOnly: Bool, changes: [String]? = nil)
    /// `timeout` in seconds; 0 waits forever. `stable`: seconds the condition must hold unchanged.
    /// `quality`: the least `linkQuality.level` the path must have.
    case wait(timeout: Double, internet: Bool, interface: String?, quiet: Bool, stable: Double? = nil,
              family: AddressFamily? = nil, quality: LinkQuality.Level? = nil)
    case check(host: String, port: Int?, json: Bool, watch: Bool)
    case probe(json: Bool)
    /// `simulate …`: play a network to the apps.
    case simulate(SimulateCommand)
    /// `--help`, for the whole program or one command.
    case help(command: String?)
    case version
}

/// What `reachctl simulate` was asked to do.
public enum SimulateCommand: Equatable, Sendable {
    /// `simulate STATUS [--connectivity V] [--expensive] [--for SEC]`; `seconds` nil: until
    /// reachctl is stopped (the simulation lasts while it is connected).
    case play(status: NetworkStatus, connectivity: Connectivity?, expensive: Bool, seconds: Int?)
    /// `simulate --reset`.
    case reset
    /// `simulate --script FILE`.
    case script(path: String)
}

/// The `reachctl` command line: `reachctl [--socket PATH] COMMAND [OPTIONS]`; the common
/// options (`--socket`, `--help`, `--version`) go before or after the command.
public struct ControlOptions: Equatable, Sendable {
    public var socketPath: String?
    public var command: ControlCommand

    public init(socketPath: String? = nil, command: ControlCommand) {
        self.socketPath = socketPath; self.command = command
    }

    public static let commands = ["status", "monitor", "wait", "check", "probe", "simulate"]

    public static let usage = """
    Usage: reachctl [--socket PATH] COMMAND [OPTIONS]

    Commands:
      status [--json] [--verbose]             the current reachability; --verbose: the route
                                              per family and the rule and table that decided
      monitor [--json] [--after SEQ] [--status-only] [--changes FIELD,…]
                                              one line per event, first the current state;
                                              --changes: only events changing these Status fields
      wait [--timeout SEC] [--internet] [--interface NAME] [--family ipv4|ipv6] [--stable SEC]
           [--quality minimal|moderate|good] [-q]
                                              wait until reachable (default 30 s, 0 = forever);
                                              --stable: until it has held SEC s without a change;
                                              --family: that family alone (with --internet, its check);
                                              --quality: the path measured at least that good
      check HOST [--port N] [--json] [--watch]
                                              how HOST is reached (route, interface, TCP connect)
      probe [--json]                          run the connectivity check now
      simulate STATUS [--connectivity V] [--expensive] [--for SEC]
                                              show the apps STATUS (wifi, wwan2G, notReachable, …)
                                              for SEC s, or until interrupted (root or [Simulation] Group=)
      simulate --reset                        end a simulation now
      simulate --script FILE                  play FILE's lines "STATUS [CONNECTIVITY] SECONDS"

    Options:
      --socket PATH   reachd's socket (default: $REACHD_SOCKET, /run/reachd/io.reachd.Reachability,
                      $XDG_RUNTIME_DIR/reachd/io.reachd.Reachability)
      --help          print help (also after a command)
      --version       print the version

    Exit status:
      0   success (wait: condition met; check: reachable; probe: a verdict, whatever it is)
      1   wait timed out; check: not reachable or host not found; probe: the check is off
      2   usage error (simulate: also a bad status, time or script line)
      69  reachd does not answer (not running, stuck, hung up, busy)
      77  simulate: not allowed (root or [Simulation] Group= only)
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

        let valued: Set<String> = ["--after", "--timeout", "--interface", "--port", "--changes", "--stable", "--family", "--quality",
                                   "--connectivity", "--for", "--script"]
        let known = valued.union(["--json", "--verbose", "--status-only", "--internet", "-q", "--quiet", "--watch",
                                  "--expensive", "--reset"])

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
            try allow(["--json", "--verbose"]); try noPositionals()
            command = .status(json: flag("--json"), verbose: flag("--verbose"))
        case "monitor":
            try allow(["--json", "--after", "--status-only", "--changes"]); try noPositionals()
            var changes: [String]?
            if let value = flags["--changes"] ?? nil {
                let names = value.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingWhitespace }
                guard SubscriptionFilter.fields(named: names) != nil else {
                    let known = Status.Field.allCases.map(\.rawValue).joined(separator: ",")
                    throw ArgumentError.invalidValue(option: "--changes", value: value, expected: "Status fields among \(known)")
                }
                changes = names
            }
            command = .monitor(json: flag("--json"), after: try integer("--after", range: 0...Int.max),
                               statusOnly: flag("--status-only"), changes: changes)
        case "wait":
            try allow(["--timeout", "--internet", "--interface", "--stable", "--family", "--quality", "-q", "--quiet"])
            try noPositionals()
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
            var family: AddressFamily?
            if let value = flags["--family"] ?? nil {
                guard let named = AddressFamily(rawValue: value) else {
                    throw ArgumentError.invalidValue(option: "--family", value: value, expected: "ipv4 or ipv6")
                }
                family = named
            }
            var quality: LinkQuality.Level?
            if let value = flags["--quality"] ?? nil {
                guard let level = LinkQuality.Level(rawValue: value), level != .unknown else {
                    throw ArgumentError.invalidValue(option: "--quality", value: value, expected: "minimal, moderate or good")
                }
                quality = level
            }
            command = .wait(timeout: timeout, internet: flag("--internet"), interface: flags["--interface"] ?? nil,
                            quiet: flag("-q") || flag("--quiet"), stable: stable, family: family, quality: quality)
        case "check":
            try allow(["--port", "--json", "--watch"])
            guard let host = positionals.first else { throw ArgumentError.missingArgument("HOST") }
            if positionals.count > 1 { throw ArgumentError.unexpectedArgument(positionals[1]) }
            command = .check(host: host, port: try integer("--port", range: 1...65535), json: flag("--json"), watch: flag("--watch"))
        case "probe":
            try allow(["--json"]); try noPositionals()
            command = .probe(json: flag("--json"))
        case "simulate":
            command = .simulate(try simulateCommand(flags: flags, order: order, positionals: positionals))
        default:
            throw ArgumentError.unknownCommand(commandName)
        }
        return ControlOptions(socketPath: socketPath, command: command)
    }

    private static func simulateCommand(flags: [String: String?], order: [String], positionals: [String]) throws -> SimulateCommand {
        func only(_ option: String) throws {
            if let bad = order.first(where: { $0 != option }) { throw ArgumentError.unexpectedArgument("\(bad) with \(option)") }
            if let extra = positionals.first { throw ArgumentError.unexpectedArgument(extra) }
        }
        if flags["--reset"] != nil {
            try only("--reset")
            return .reset
        }
        if let path = flags["--script"] ?? nil {
            try only("--script")
            return .script(path: path)
        }
        if let bad = order.first(where: { !["--connectivity", "--expensive", "--for"].contains($0) }) {
            throw ArgumentError.unknownOption(bad)
        }
        guard let name = positionals.first else { throw ArgumentError.missingArgument("STATUS (or --reset, --script FILE)") }
        if positionals.count > 1 { throw ArgumentError.unexpectedArgument(positionals[1]) }
        guard let status = NetworkStatus(rawValue: name) else {
            throw ArgumentError.invalidValue(option: "STATUS", value: name,
                                             expected: NetworkStatus.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var connectivity: Connectivity?
        if let value = flags["--connectivity"] ?? nil {
            guard let verdict = Connectivity(rawValue: value) else {
                throw ArgumentError.invalidValue(option: "--connectivity", value: value,
                                                 expected: Connectivity.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if status.isReachable == (verdict == .none) {
                throw ArgumentError.invalidValue(option: "--connectivity", value: value,
                                                 expected: status.isReachable ? "unknown, portal, limited or full for a reachable status" : "none for notReachable")
            }
            connectivity = verdict
        }
        if flags["--expensive"] != nil, !status.isReachable {
            throw ArgumentError.invalidValue(option: "--expensive", value: name, expected: "a reachable status")
        }
        var seconds: Int?
        if let value = flags["--for"] ?? nil {
            guard let number = Int(value), (1...SimulateRequest.maximumSeconds).contains(number) else {
                throw ArgumentError.invalidValue(option: "--for", value: value, expected: "seconds, 1…\(SimulateRequest.maximumSeconds)")
            }
            seconds = number
        }
        return .play(status: status, connectivity: connectivity, expensive: flags["--expensive"] != nil, seconds: seconds)
    }
}
