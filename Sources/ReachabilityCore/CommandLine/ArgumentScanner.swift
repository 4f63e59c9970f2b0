/// A command line that cannot be used: what was wrong, in words for the user (exit 2).
public enum ArgumentError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownOption(String)
    case missingValue(option: String)
    case invalidValue(option: String, value: String, expected: String)
    case unexpectedArgument(String)
    case missingArgument(String)
    case missingCommand
    case unknownCommand(String)

    public var description: String {
        switch self {
        case .unknownOption(let option): return "unknown option '\(option)'"
        case .missingValue(let option): return "option '\(option)' needs a value"
        case .invalidValue(let option, let value, let expected): return "invalid value '\(value)' for '\(option)' (expected \(expected))"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)'"
        case .missingArgument(let name): return "missing \(name)"
        case .missingCommand: return "missing command"
        case .unknownCommand(let command): return "unknown command '\(command)'"
        }
    }
}

/// Walks an argument list: `--name value`, `--name=value`, flags, and positionals.
/// The small shared engine of the daemon's and reachctl's parsers.
public struct ArgumentScanner: Sendable {
    private var arguments: [String]
    private var index = 0
    /// The value of an `--option=value` just read, waiting for `value(for:)`.
    private var inlineValue: String?

    public init(_ arguments: [String]) { self.arguments = arguments }

    /// The next token: an option name (without `=value`), or a positional; nil at the end.
    /// After `--`, everything is positional.
    public mutating func next() -> Token? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        inlineValue = nil
        if positionalOnly { return .positional(argument) }
        if argument == "--" {
            positionalOnly = true
            return next()
        }
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            inlineValue = String(argument[argument.index(after: equals)...])
            return .option(String(argument[..<equals]))
        }
        if argument.hasPrefix("-") && argument.count > 1 { return .option(argument) }
        return .positional(argument)
    }

    /// After `--`, everything is positional.
    private var positionalOnly = false

    /// The value for `option`, from `--option=value` or the next argument.
    public mutating func value(for option: String) throws -> String {
        if let inlineValue { self.inlineValue = nil; return inlineValue }
        guard index < arguments.count else { throw ArgumentError.missingValue(option: option) }
        defer { index += 1 }
        return arguments[index]
    }

    /// The value for `option` as a log level (`--log-level`), any case.
    public mutating func logLevel(for option: String) throws -> LogLevel {
        let value = try value(for: option)
        guard let level = LogLevel(rawValue: value.lowercased()) else {
            throw ArgumentError.invalidValue(option: option, value: value,
                                             expected: LogLevel.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return level
    }

    /// Rejects `--flag=value` for options that take none.
    public mutating func noValue(for option: String) throws {
        if let inlineValue { throw ArgumentError.invalidValue(option: option, value: inlineValue, expected: "no value") }
    }

    public enum Token: Equatable, Sendable {
        case option(String)
        case positional(String)
    }
}
