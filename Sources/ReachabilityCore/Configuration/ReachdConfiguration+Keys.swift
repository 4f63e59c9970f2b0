import FoundationEssentials

// The table of every section and key reachd understands, networkd style: one row per key with
// its parser. `Key=` (empty value) resets a key to its default, and a list key to empty, as in
// systemd; a later assignment of a plain key replaces the earlier one, a later assignment of a
// list key adds to it.

extension ReachdConfiguration {
    /// One key of the configuration file.
    public struct Key: Sendable {
        /// The section the key lives in (`Monitor`).
        public let section: String
        /// The key (`Debounce`), or for a prefix key the prefix including its dot (`Kind.`).
        public let name: String
        /// True for `Kind.GLOB=`: the rest of the key after `name` is an argument.
        public let isPrefix: Bool
        let apply: @Sendable (inout ReachdConfiguration, _ argument: String, _ value: String) throws(ValueError) -> Void
    }

    /// What is wrong with a value; `parse` adds file, line and key.
    package struct ValueError: Error {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    /// The sections, in the order `config/reachd.conf` documents them.
    public static let sections = ["Monitor", "Interfaces", "Connectivity", "Cellular", "LinkQuality", "DataStall", "Socket", "Events", "Simulation", "Limits", "Metrics"]

    /// Every key reachd understands. A plain key's default is its section's initial value: `Key=`
    /// (empty) puts that back.
    public static let keys: [Key] = [
        list("Monitor", "IgnoreInterfaces", \.monitor.ignoreInterfaces),
        plain("Monitor", "Debounce", \.monitor.debounceMilliseconds) { value throws(ValueError) in
            Int((try within(timeSpan(value, defaultUnit: 0.001, unitName: "milliseconds, e.g. 200 or 1.5s"),
                            0...3600, "0 to 1h") * 1000).rounded())
        },
        plain("Monitor", "SleepLimit", \.monitor.sleepLimitSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 120 or 2min")), 1...86400, "1 s to 1 day")
        },
        Key(section: "Interfaces", name: "Kind.", isPrefix: true) { config, glob, value throws(ValueError) in
            guard !glob.isEmpty else { throw ValueError("missing interface glob after 'Kind.' (expected e.g. Kind.wwan*=wwan)") }
            guard !glob.contains(where: { $0 == " " || $0 == "\t" }) else { throw ValueError("bad glob '\(glob)' (no spaces allowed)") }
            let existing = config.interfaces.kinds.firstIndex { $0.glob == glob }
            if value.isEmpty {
                if let existing { config.interfaces.kinds.remove(at: existing) }
                return
            }
            guard let kind = InterfaceKind(rawValue: value) else {
                throw ValueError("bad kind (expected one of \(InterfaceKind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            // Re-assigning a glob (say in a drop-in) changes its kind but keeps its priority.
            if let existing { config.interfaces.kinds[existing].kind = kind }
            else { config.interfaces.kinds.append(KindOverride(glob: glob, kind: kind)) }
        },
        list("Interfaces", "Metered", \.interfaces.metered),
        list("Interfaces", "NotMetered", \.interfaces.notMetered),
        list("Interfaces", "Constrained", \.interfaces.constrained),
        plain("Interfaces", "LeaseDirectory", \.interfaces.leaseDirectory) { value throws(ValueError) in try absolutePath(value) },
        plain("Interfaces", "NetworkManager", \.interfaces.networkManager) { value throws(ValueError) in try boolean(value) },
        plain("Connectivity", "Enabled", \.connectivity.enabled) { value throws(ValueError) in try boolean(value) },
        plain("Connectivity", "URL", \.connectivity.url) { value throws(ValueError) in try httpURL(value) },
        plain("Connectivity", "Response", \.connectivity.response) { value throws(ValueError) in value },
        plain("Connectivity", "Interval", \.connectivity.intervalSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 300 or 5min")), 0...7 * 86400, "at most 7 days")
        },
        plain("Connectivity", "Timeout", \.connectivity.timeoutSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 5 or 2.5s")), 0...3600, "at most 1h")
        },
        plain("Connectivity", "CAFile", \.connectivity.caFile) { value throws(ValueError) in try absolutePath(value) },
        plain("Connectivity", "CheckStandby", \.connectivity.checkStandby) { value throws(ValueError) in
            if value.lowercased() == "unmetered" { return .unmetered }
            do { return try boolean(value) ? .yes : .no } catch { throw ValueError("bad value (expected yes, no or unmetered)") }
        },
        plain("Connectivity", "StandbyInterval", \.connectivity.standbyIntervalSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 1500 or 25min")), 0...7 * 86400, "at most 7 days")
        },
        plain("Cellular", "ModemManager", \.cellular.modemManager) { value throws(ValueError) in try boolean(value) },
        plain("LinkQuality", "Enabled", \.linkQuality.enabled) { value throws(ValueError) in try boolean(value) },
        plain("LinkQuality", "Interval", \.linkQuality.intervalSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 10 or 500ms")), 0.1...3600, "0.1 s to 1h")
        },
        plain("LinkQuality", "StaleAfter", \.linkQuality.staleAfterSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 300 or 5min")), 1...86400, "1 s to 1 day")
        },
        plain("LinkQuality", "UnknownAfter", \.linkQuality.unknownAfterSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 900 or 15min")), 1...86400, "1 s to 1 day")
        },
        plain("DataStall", "Enabled", \.dataStall.enabled) { value throws(ValueError) in try boolean(value) },
        plain("DataStall", "MinimumSegments", \.dataStall.minimumSegments) { value throws(ValueError) in try count(value, 1...100_000) },
        plain("DataStall", "FailRate", \.dataStall.failRatePercent) { value throws(ValueError) in
            let text = value.hasSuffix("%") ? String(value.dropLast()) : value
            guard let percent = Double(text), percent.isFinite, (1...100).contains(percent) else {
                throw ValueError("bad percentage (expected 1 to 100, e.g. 80 or 80%)")
            }
            return percent
        },
        plain("DataStall", "ExpensiveRecheckInterval", \.dataStall.expensiveRecheckIntervalSeconds) { value throws(ValueError) in
            try within(positive(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 60 or 1min")), 1...86400, "1 s to 1 day")
        },
        plain("Socket", "Path", \.socket.path) { value throws(ValueError) in try absolutePath(value) },
        plain("Socket", "Mode", \.socket.mode) { value throws(ValueError) in try octalMode(value) },
        plain("Socket", "Group", \.socket.group) { value throws(ValueError) in try groupName(value) },
        plain("Events", "History", \.events.history) { value throws(ValueError) in try count(value, 0...65536) },
        plain("Limits", "MaxConnections", \.limits.maxConnections) { value throws(ValueError) in try count(value, 1...65536) },
        plain("Limits", "MaxConnectionsPerUser", \.limits.maxConnectionsPerUser) { value throws(ValueError) in try count(value, 1...65536) },
        plain("Limits", "PartialMessageTimeout", \.limits.partialMessageTimeoutSeconds) { value throws(ValueError) in
            try within(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 10 or 500ms"), 0.1...3600, "100ms to 1h")
        },
        plain("Limits", "MaxQueuedBytes", \.limits.maxQueuedBytes) { value throws(ValueError) in
            try byteSize(value, 1 << 20...1 << 30, "1M to 1G")
        },
        plain("Limits", "MaxChecksInFlight", \.limits.maxChecksInFlight) { value throws(ValueError) in try count(value, 1...256) },
        plain("Limits", "MaxChecksPerUser", \.limits.maxChecksPerUser) { value throws(ValueError) in try count(value, 1...256) },
        plain("Limits", "ProbeMinInterval", \.limits.probeMinIntervalSeconds) { value throws(ValueError) in
            try within(timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 1 or 500ms"), 0.1...3600, "100ms to 1h")
        },
        plain("Simulation", "Group", \.simulation.group) { value throws(ValueError) in try groupName(value) },
        plain("Metrics", "Listen", \.metrics.listen) { value throws(ValueError) in
            do throws(MetricsListenAddress.ParseError) {
                return try MetricsListenAddress(value)
            } catch {
                throw ValueError("\(error.problem) (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)")
            }
        },
        plain("Metrics", "TextfileDirectory", \.metrics.textfileDirectory) { value throws(ValueError) in try absolutePath(value) },
        plain("Metrics", "TextfileInterval", \.metrics.textfileIntervalSeconds) { value throws(ValueError) in
            let seconds = try timeSpan(value, defaultUnit: 1, unitName: "seconds, e.g. 15 or 1min")
            guard (1...86_400).contains(seconds) else { throw ValueError("bad time span (expected 1 second to 24 hours)") }
            return seconds
        },
    ]

    /// A key holding one value: `Key=` (empty) resets `field` to its default, the value
    /// `ReachdConfiguration()` has; any other value is parsed and replaces the earlier one.
    static func plain<Value>(_ section: String, _ name: String, _ field: WritableKeyPath<ReachdConfiguration, Value> & Sendable,
                             parse: @escaping @Sendable (String) throws(ValueError) -> Value) -> Key {
        Key(section: section, name: name, isPrefix: false) { config, _, value throws(ValueError) in
            config[keyPath: field] = value.isEmpty ? ReachdConfiguration()[keyPath: field] : try parse(value)
        }
    }

    /// A key holding space-separated globs: each assignment adds to the list, `Key=` empties it.
    static func list(_ section: String, _ name: String, _ field: WritableKeyPath<ReachdConfiguration, [String]> & Sendable) -> Key {
        Key(section: section, name: name, isPrefix: false) { config, _, value throws(ValueError) in
            if value.isEmpty { config[keyPath: field] = [] } else { config[keyPath: field] += try globs(value) }
        }
    }

    /// The key an assignment names, and the argument of a prefix key; nil when unknown.
    static func key(section: String, name: String) -> (Key, argument: String)? {
        for key in keys where key.section == section {
            if key.isPrefix {
                if name.hasPrefix(key.name) { return (key, String(name.dropFirst(key.name.count))) }
            } else if key.name == name {
                return (key, "")
            }
        }
        return nil
    }

    // MARK: - Value parsers (systemd's parse_boolean, parse_sec, parse_mode, …)

    /// systemd's booleans: yes/no, true/false, on/off, 1/0 (and y/n, t/f), any case.
    package static func boolean(_ value: String) throws(ValueError) -> Bool {
        switch value.lowercased() {
        case "1", "yes", "y", "true", "t", "on": return true
        case "0", "no", "n", "false", "f", "off": return false
        default: throw ValueError("bad boolean (expected yes/no, true/false, on/off or 1/0)")
        }
    }

    /// Space-separated globs.
    package static func globs(_ value: String) throws(ValueError) -> [String] {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    /// A time span: a number in `defaultUnit` seconds, or a number with a unit
    /// (`us`, `ms`, `s`/`sec`, `m`/`min`, `h`/`hr`), as in systemd's `parse_sec()`. Not negative.
    package static func timeSpan(_ value: String, defaultUnit: Double, unitName: String) throws(ValueError) -> Double {
        let units: [String: Double] = [
            "us": 0.000_001, "usec": 0.000_001, "ms": 0.001, "msec": 0.001,
            "s": 1, "sec": 1, "second": 1, "seconds": 1,
            "m": 60, "min": 60, "minute": 60, "minutes": 60,
            "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
        ]
        let digits = value.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = INIParser.trimmed(value.dropFirst(digits.count))
        guard !digits.isEmpty, let number = Double(digits), number.isFinite,
              let factor = unit.isEmpty ? defaultUnit : units[unit] else {
            throw ValueError("bad time span (expected \(unitName))")
        }
        return number * factor
    }

    package static func positive(_ seconds: Double) throws(ValueError) -> Double {
        guard seconds > 0 else { throw ValueError("bad time span (must be greater than 0)") }
        return seconds
    }

    /// A time span (seconds) inside `range`, so that no later conversion (to milliseconds, to a
    /// Dispatch deadline) can overflow.
    package static func within(_ seconds: Double, _ range: ClosedRange<Double>, _ text: String) throws(ValueError) -> Double {
        guard range.contains(seconds) else { throw ValueError("time span out of range (\(text))") }
        return seconds
    }

    /// A decimal integer inside `range` (digits only: no sign, no spaces).
    static func count(_ value: String, _ range: ClosedRange<Int>) throws(ValueError) -> Int {
        guard !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(value), range.contains(n) else {
            throw ValueError("bad number (expected an integer from \(range.lowerBound) to \(range.upperBound))")
        }
        return n
    }

    /// A size in bytes: a number with an optional K, M or G suffix (powers of 1024, as systemd's
    /// `parse_size()`), inside `range`.
    static func byteSize(_ value: String, _ range: ClosedRange<Int>, _ text: String) throws(ValueError) -> Int {
        let digits = value.prefix { $0.isASCII && $0.isNumber }
        let suffix = INIParser.trimmed(value.dropFirst(digits.count))
        let factors: [String: Int] = ["": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard !digits.isEmpty, digits.count <= 12, let n = Int(digits), let factor = factors[suffix.uppercased()] else {
            throw ValueError("bad size (expected bytes, or with K, M or G, e.g. 64M)")
        }
        let (bytes, overflow) = n.multipliedReportingOverflow(by: factor)
        guard !overflow, range.contains(bytes) else { throw ValueError("size out of range (\(text))") }
        return bytes
    }

    /// An absolute path.
    package static func absolutePath(_ value: String) throws(ValueError) -> String {
        guard value.hasPrefix("/") else { throw ValueError("bad path (must be absolute)") }
        return value
    }

    /// A group name (for `getgrnam`): no white space, no `:` or `/`.
    static func groupName(_ value: String) throws(ValueError) -> String {
        guard !value.contains(where: { $0 == " " || $0 == "\t" || $0 == ":" || $0 == "/" }) else {
            throw ValueError("bad group name")
        }
        return value
    }

    /// An octal file mode up to 07777, as systemd's `parse_mode()` (`0666`, `660`).
    static func octalMode(_ value: String) throws(ValueError) -> UInt32 {
        guard value.allSatisfy({ ("0"..."7").contains($0) }), let mode = UInt32(value, radix: 8), mode <= 0o7777 else {
            throw ValueError("bad octal mode (expected e.g. 0666 or 0660)")
        }
        return mode
    }

    /// The connectivity check's URL, parsed by the same `ProbeURL` the check uses, so a file
    /// that loads is a URL the check can take (http, or https with the certificate verified).
    static func httpURL(_ value: String) throws(ValueError) -> String {
        guard !value.contains(where: { $0 == " " || $0 == "\t" }) else {
            throw ValueError("bad URL: contains white space (expected http://HOST[:PORT]/PATH or https://…)")
        }
        do {
            return try ProbeURL(value).string
        } catch {
            throw ValueError("bad URL: \(error.problem) (expected http://HOST[:PORT]/PATH or https://…)")
        }
    }
}
