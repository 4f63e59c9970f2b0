extension ReachdConfiguration {
    /// The drop-in directory of a main file: `<main file>.d`, so `/etc/reachd/reachd.conf`
    /// has `/etc/reachd/reachd.conf.d/` (systemd's convention for `*.conf` files).
    public static func dropInDirectory(for mainFile: String) -> String { mainFile + ".d" }

    /// The drop-ins of `mainFile` that exist, in the order they are applied: `*.conf` in
    /// lexical (byte) order; hidden files are skipped.
    public static func dropIns(for mainFile: String, in source: some ConfigurationFileSource) throws(ConfigurationError) -> [String] {
        try source.dropIns(for: mainFile)
    }

    /// Reads the main file, then its drop-ins (`dropIns(for:in:)`), each overriding what came
    /// before. A missing main file means the defaults (unless `mustExist`).
    ///
    /// - Throws: `ConfigurationError` for the first bad line, or a file that cannot be read.
    public static func load(mainFile: String = defaultPath, mustExist: Bool = false,
                            source: some ConfigurationFileSource) throws(ConfigurationError) -> ReachdConfiguration {
        try source.load(mainFile: mainFile, mustExist: mustExist, startingWith: ReachdConfiguration()) { text, file, base throws(ConfigurationError) in
            try parse(text, file: file, into: base)
        }
    }

    /// Applies the INI text of one file on top of `base`.
    ///
    /// - Parameter file: the name used in errors.
    /// - Throws: `ConfigurationError` for a syntax error, an unknown section or key, or a bad value.
    public static func parse(_ text: String, file: String, into base: ReachdConfiguration = ReachdConfiguration()) throws(ConfigurationError) -> ReachdConfiguration {
        let ini = try INIParser.parse(text, file: file)
        for (name, line) in ini.sections where !sections.contains(name) {
            throw ConfigurationError(file: file, line: line, section: name,
                                     message: "unknown section (expected one of \(sections.map { "[\($0)]" }.joined(separator: " ")))"
                                         + suggestion(name, among: sections, format: { "[\($0)]" }))
        }
        var config = base
        for assignment in ini.assignments {
            guard let (key, argument) = key(section: assignment.section, name: assignment.key) else {
                let known = keys.filter { $0.section == assignment.section }.map(\.name)
                throw ConfigurationError(file: file, line: assignment.line, section: assignment.section,
                                         key: assignment.key, value: assignment.value,
                                         message: "unknown key in section [\(assignment.section)]"
                                             + suggestion(assignment.key, among: known, format: { "\($0)=" }))
            }
            do {
                try key.apply(&config, argument, assignment.value)
            } catch {
                throw ConfigurationError(file: file, line: assignment.line, section: assignment.section,
                                         key: assignment.key, value: assignment.value, message: error.message)
            }
        }
        return config
    }

    /// " (did you mean X?)" when a known name is close to `name` (`NameSuggestion`).
    private static func suggestion(_ name: String, among known: [String], format: (String) -> String) -> String {
        guard let match = NameSuggestion.closest(to: name, among: known) else { return "" }
        return " (did you mean \(format(match))?)"
    }
}
