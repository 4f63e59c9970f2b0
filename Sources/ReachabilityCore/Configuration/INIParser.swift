/// One `Key=Value` assignment of an INI file in systemd's style, with where it came from.
public struct INIAssignment: Equatable, Sendable {
    /// The section the assignment is in, without brackets (`Monitor`).
    public var section: String
    /// The key, whitespace trimmed (`IgnoreInterfaces`, `Kind.wlan*`).
    public var key: String
    /// The value, whitespace trimmed; empty for `Key=` (which resets a key, as in systemd).
    public var value: String
    /// The file the assignment was read from (as given to the parser).
    public var file: String
    /// 1-based line number.
    public var line: Int

    public init(section: String, key: String, value: String, file: String, line: Int) {
        self.section = section; self.key = key; self.value = value; self.file = file; self.line = line
    }
}

/// A parsed INI file: its section headers and its assignments, each in file order.
public struct INIFile: Equatable, Sendable {
    /// Every `[Section]` header with its line, including sections without assignments.
    public var sections: [(name: String, line: Int)]
    public var assignments: [INIAssignment]

    public static func == (a: INIFile, b: INIFile) -> Bool {
        a.assignments == b.assignments && a.sections.map(\.name) == b.sections.map(\.name)
            && a.sections.map(\.line) == b.sections.map(\.line)
    }
}

/// Parses INI text the way systemd reads unit and `*.conf` files (systemd's `config_parse()`):
///
/// - `[Section]` starts a section; names are case-sensitive.
/// - `Key=Value`; whitespace around key and value is trimmed, the value is taken verbatim
///   otherwise (no quotes, no escapes: nothing reachd reads needs them).
/// - Lines whose first non-blank character is `#` or `;` are comments; a `#` later in a line is
///   part of the value, as in systemd.
/// - Blank lines are ignored. Line continuation (`\` at the end) is not supported.
///
/// The parser only checks the syntax; which sections and keys exist is `ReachdConfiguration`'s
/// business.
public enum INIParser {
    /// Returns the section headers and assignments of `text` in file order.
    ///
    /// - Parameter file: the name used in errors and stored in each assignment.
    /// - Throws: `ConfigurationError` for a line that is neither a comment, a section header nor
    ///   an assignment, for an assignment before the first section, and for an empty key.
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> INIFile {
        var result = INIFile(sections: [], assignments: [])
        var section: String?
        var lineNumber = 0
        // Keep empty lines so numbering matches what an editor shows. "\r\n" is a single
        // Character in Swift, so it is a separator of its own (a file edited on Windows).
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            let line = trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count >= 2 else {
                    throw ConfigurationError(file: file, line: lineNumber,
                                             message: "invalid section header '\(line)' (missing ']')")
                }
                let name = trimmed(line.dropFirst().dropLast())
                guard !name.isEmpty else {
                    throw ConfigurationError(file: file, line: lineNumber, message: "empty section name '[]'")
                }
                section = name
                result.sections.append((name, lineNumber))
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(file: file, line: lineNumber,
                                         message: "missing '=' in '\(line)' (expected Key=Value)")
            }
            let key = trimmed(line[..<equals])
            let value = trimmed(line[line.index(after: equals)...])
            guard !key.isEmpty else {
                throw ConfigurationError(file: file, line: lineNumber, message: "missing key before '=' in '\(line)'")
            }
            guard let section else {
                throw ConfigurationError(file: file, line: lineNumber, key: key, value: value,
                                         message: "assignment outside of any section")
            }
            result.assignments.append(INIAssignment(section: section, key: key, value: value, file: file, line: lineNumber))
        }
        return result
    }

    /// Trims spaces, tabs and carriage returns (systemd's WHITESPACE plus "\r").
    static func trimmed<S: StringProtocol>(_ s: S) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{0B}" || $0 == "\u{0C}" }
        guard let first = s.firstIndex(where: { !isBlank($0) }) else { return "" }
        guard let last = s.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(s[first...last])
    }
}
