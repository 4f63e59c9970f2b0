import FoundationEssentials
import ReachabilityCore

/// The configuration of `reachd-dispatcher`: `/etc/reachd/dispatcher.conf`, then
/// `/etc/reachd/dispatcher.conf.d/*.conf` in lexical order, INI in systemd's style, each key
/// checked as reachd.conf's are (a bad one names file, line and key).
public struct DispatcherConfiguration: Equatable, Sendable {
    public static let defaultPath = "/etc/reachd/dispatcher.conf"
    /// Where scripts are looked for, first directory first: a script in an earlier directory
    /// replaces (or, as a symlink to /dev/null, masks) one of the same name in a later one.
    public static let defaultScriptDirectories = ["/etc/reachd/dispatcher.d", "/usr/local/lib/reachd/dispatcher.d",
                                                  "/usr/lib/reachd/dispatcher.d"]

    /// `[Targets]`: the network targets.
    public struct Targets: Equatable, Sendable {
        /// Start and stop the targets at all.
        public var enabled = true
        /// `HoldSec=`: how long a condition must hold before its target is started or stopped.
        public var holdSeconds: Double = 3
        /// `OnlineHoldSec=`, `InternetHoldSec=`, `UnmeteredHoldSec=`: per target, over `HoldSec=`.
        public var holdOverrides: [NetworkTarget: Double] = [:]

        /// The hold of `target`.
        public func hold(for target: NetworkTarget) -> Double { holdOverrides[target] ?? holdSeconds }
    }

    /// `[Scripts]`: the dispatcher scripts.
    public struct Scripts: Equatable, Sendable {
        public var enabled = true
        /// `Timeout=`: a script still running after this is killed (its whole process group).
        public var timeoutSeconds: Double = 30
        /// `Directories=`.
        public var directories = DispatcherConfiguration.defaultScriptDirectories
        /// `Changes=`: the `Status` fields a script without a `Changes.GLOB=` of its own runs for;
        /// empty: every event.
        public var changes: [String] = []
        /// `Changes.GLOB=`: the fields the scripts whose names match GLOB run for, in the order
        /// given; the first matching glob counts.
        public var changesByScript: [ScriptChanges] = []
    }

    /// One `Changes.GLOB=` line.
    public struct ScriptChanges: Equatable, Sendable {
        public var glob: String
        public var changes: [String]
        public init(glob: String, changes: [String]) { self.glob = glob; self.changes = changes }
    }

    public var targets = Targets()
    public var scripts = Scripts()
    /// `[Dispatcher] MinIntervalSec=`: the least time between the starts of two script runs;
    /// what comes between is merged into the next run (`REACHD_COALESCED`). A network that
    /// floods events (router advertisements with a new DNS server each) gets at most one run
    /// of root's scripts per interval. 0: no pause but the scripts' own time.
    public var minimumIntervalSeconds: Double = 1

    public init() {}

    /// The fields `script` runs for; empty means every event.
    public func changes(forScript name: String) -> [String] {
        scripts.changesByScript.first { Glob($0.glob).matches(name) }?.changes ?? scripts.changes
    }

    // MARK: - Loading

    public static let sections = ["Targets", "Scripts", "Dispatcher"]

    /// Reads the main file (absent: the defaults, unless `mustExist`) and its drop-ins, as
    /// reachd.conf is read (`ConfigurationFileSource.files(mainFile:mustExist:)`).
    public static func load(mainFile: String = defaultPath, mustExist: Bool = false,
                            source: some ConfigurationFileSource) throws(ConfigurationError) -> DispatcherConfiguration {
        try source.load(mainFile: mainFile, mustExist: mustExist, startingWith: DispatcherConfiguration()) { text, file, base throws(ConfigurationError) in
            try parse(text, file: file, into: base)
        }
    }

    /// Applies one file's INI text on top of `base`.
    public static func parse(_ text: String, file: String,
                             into base: DispatcherConfiguration = DispatcherConfiguration()) throws(ConfigurationError) -> DispatcherConfiguration {
        let ini = try INIParser.parse(text, file: file)
        for (name, line) in ini.sections where !sections.contains(name) {
            throw ConfigurationError(file: file, line: line, section: name,
                                     message: "unknown section (expected one of \(sections.map { "[\($0)]" }.joined(separator: " ")))"
                                         + (NameSuggestion.closest(to: name, among: sections).map { " (did you mean [\($0)]?)" } ?? ""))
        }
        var config = base
        for assignment in ini.assignments {
            do throws(ReachdConfiguration.ValueError) {
                try apply(assignment, to: &config)
            } catch {
                throw ConfigurationError(file: file, line: assignment.line, section: assignment.section,
                                         key: assignment.key, value: assignment.value, message: error.message)
            }
        }
        return config
    }

    typealias ValueError = ReachdConfiguration.ValueError

    private static let targetKeys: [String: NetworkTarget] = [
        "OnlineHoldSec": .online, "InternetHoldSec": .internet, "UnmeteredHoldSec": .unmetered,
    ]

    private static func apply(_ assignment: INIAssignment, to config: inout DispatcherConfiguration) throws(ValueError) {
        let value = assignment.value
        let defaults = DispatcherConfiguration()
        switch (assignment.section, assignment.key) {
        case ("Targets", "Enabled"):
            config.targets.enabled = value.isEmpty ? defaults.targets.enabled : try ReachdConfiguration.boolean(value)
        case ("Targets", "HoldSec"):
            config.targets.holdSeconds = value.isEmpty ? defaults.targets.holdSeconds : try holdTime(value)
        case ("Targets", let key) where targetKeys[key] != nil:
            guard let target = targetKeys[key] else { return }
            config.targets.holdOverrides[target] = value.isEmpty ? nil : try holdTime(value)
        case ("Scripts", "Enabled"):
            config.scripts.enabled = value.isEmpty ? defaults.scripts.enabled : try ReachdConfiguration.boolean(value)
        case ("Scripts", "Timeout"):
            config.scripts.timeoutSeconds = value.isEmpty ? defaults.scripts.timeoutSeconds
                : try ReachdConfiguration.within(ReachdConfiguration.positive(
                    ReachdConfiguration.timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 30 or 1min")), 0...86_400, "at most 24h")
        case ("Scripts", "Directories"):
            if value.isEmpty { config.scripts.directories = defaults.scripts.directories; return }
            let paths = try ReachdConfiguration.globs(value)
            for path in paths { _ = try ReachdConfiguration.absolutePath(path) }
            config.scripts.directories = paths
        case ("Scripts", "Changes"):
            config.scripts.changes = try fields(value)
        case ("Scripts", let key) where key.hasPrefix("Changes."):
            let glob = String(key.dropFirst("Changes.".count))
            guard !glob.isEmpty else { throw ValueError("missing script name glob after 'Changes.' (expected e.g. Changes.50-vpn*=vpn)") }
            let existing = config.scripts.changesByScript.firstIndex { $0.glob == glob }
            if value.isEmpty {
                if let existing { config.scripts.changesByScript.remove(at: existing) }
                return
            }
            let list = try fields(value)
            if let existing { config.scripts.changesByScript[existing].changes = list }
            else { config.scripts.changesByScript.append(ScriptChanges(glob: glob, changes: list)) }
        case ("Dispatcher", "MinIntervalSec"):
            config.minimumIntervalSeconds = value.isEmpty ? defaults.minimumIntervalSeconds
                : try ReachdConfiguration.within(ReachdConfiguration.timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 1 or 500ms"),
                                                 0...3600, "0 to 1h")
        default:
            let known: [String]
            switch assignment.section {
            case "Targets": known = ["Enabled=", "HoldSec=", "OnlineHoldSec=", "InternetHoldSec=", "UnmeteredHoldSec="]
            case "Scripts": known = ["Enabled=", "Timeout=", "Directories=", "Changes=", "Changes.GLOB="]
            default: known = ["MinIntervalSec="]
            }
            let names = known.map { $0.hasSuffix(".GLOB=") ? String($0.dropLast("GLOB=".count)) : String($0.dropLast()) }
            let guess = NameSuggestion.closest(to: assignment.key, among: names).map { " (did you mean \($0.hasSuffix(".") ? $0 + "GLOB" : $0)=?)" }
            throw ValueError("unknown key in section [\(assignment.section)] (expected one of \(known.joined(separator: " ")))" + (guess ?? ""))
        }
    }

    private static func holdTime(_ value: String) throws(ValueError) -> Double {
        try ReachdConfiguration.within(ReachdConfiguration.timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 3 or 500ms"),
                                       0...86_400, "0 to 24h")
    }

    /// Space- or comma-separated `Status` field names (`status connectivity`).
    private static func fields(_ value: String) throws(ValueError) -> [String] {
        let names = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
        let known = Set(Status.Field.allCases.map(\.rawValue))
        for name in names where !known.contains(name) {
            throw ValueError("unknown status field '\(name)' (expected some of \(Status.Field.byName.map(\.rawValue).joined(separator: " ")))")
        }
        return names
    }
}
