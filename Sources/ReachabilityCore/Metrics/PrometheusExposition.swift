import FoundationEssentials

/// Renders reachd's metrics in the Prometheus text exposition format 0.0.4 — what `GET /metrics`
/// answers and what `reachd.prom` holds for node_exporter's textfile collector.
///
/// Pure: a `MetricsSample` in, text out. Every family has `# HELP` and `# TYPE`, counters end in
/// `_total`, units are in the names (`_seconds`, `_ratio`), and one-hot gauges list every value
/// so that a query never has to tell "0" from "absent".
public enum PrometheusExposition {
    /// The `Content-Type` of the format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func render(_ sample: MetricsSample) -> String {
        var out = Writer()
        let status = sample.status

        out.family("reachd_info", .gauge, "Version of the running reachd; always 1.")
        out.sample("reachd_info", ["version": sample.version], 1)

        out.family("reachd_reachable", .gauge, "1 when the machine has a usable default route.")
        out.sample("reachd_reachable", [:], status.reachable)

        out.family("reachd_status", .gauge, "The kind of network the primary path uses: 1 for the current status, 0 for the others.")
        for value in NetworkStatus.allCases {
            out.sample("reachd_status", ["status": value.rawValue], value == status.status)
        }

        out.family("reachd_connectivity", .gauge, "Whether the internet answers, by the last connectivity check: 1 for the current verdict, 0 for the others.")
        for value in Connectivity.allCases {
            out.sample("reachd_connectivity", ["state": value.rawValue], value == status.connectivity)
        }
        out.family("reachd_connectivity_family", .gauge,
                   "Whether each family's internet answers, by its own check: 1 for the family's current verdict, 0 for the others.")
        for family in AddressFamily.allCases {
            let verdict: Connectivity
            switch family {
            case .ipv4: verdict = status.ipv4Connectivity
            case .ipv6: verdict = status.ipv6Connectivity
            }
            for value in Connectivity.allCases {
                out.sample("reachd_connectivity_family", ["family": family.rawValue, "state": value.rawValue], value == verdict)
            }
        }

        out.family("reachd_expensive", .gauge, "1 when the primary path is cellular or configured as metered.")
        out.sample("reachd_expensive", [:], status.expensive)
        out.family("reachd_ipv4", .gauge, "1 when a usable IPv4 default route exists.")
        out.sample("reachd_ipv4", [:], status.ipv4)
        out.family("reachd_ipv6", .gauge, "1 when a usable IPv6 default route exists.")
        out.sample("reachd_ipv6", [:], status.ipv6)
        out.family("reachd_vpn_active", .gauge, "1 when a VPN carries the default route.")
        out.sample("reachd_vpn_active", [:], status.vpn != nil)
        out.family("reachd_simulated", .gauge, "1 while a simulation (reachctl simulate) is in effect.")
        out.sample("reachd_simulated", [:], status.simulated)

        if let primary = status.primary {
            out.family("reachd_primary_info", .gauge, "The primary interface and its kind; absent when not reachable.")
            out.sample("reachd_primary_info", ["interface": primary.name, "kind": primary.kind.rawValue], 1)
        }

        // The primary's verdict is the machine's; each standby uplink's is its own check's.
        let uplinks = (status.primary.map { [($0.name, status.connectivity)] } ?? [])
            + status.interfaces.compactMap { interface in
                interface.index == status.primary?.index ? nil : interface.connectivity.map { (interface.name, $0) }
            }
        if !uplinks.isEmpty {
            out.family("reachd_interface_connectivity", .gauge,
                       "Whether the internet answers over each uplink (the primary, and the standby uplinks the standby check checks): 1 for its verdict, 0 for the others.")
            for (name, verdict) in uplinks {
                for value in Connectivity.allCases {
                    out.sample("reachd_interface_connectivity", ["interface": name, "state": value.rawValue], value == verdict)
                }
            }
        }

        // The path's links (the primary, a VPN on it) and every uplink checked, measured or stalled.
        let stallUplinks = status.interfaces.filter { interface in
            interface.index == status.primary?.index || interface.index == status.vpn?.index
                || interface.connectivity != nil || interface.linkQuality != nil || interface.stall != nil
        }.sorted { ($0.index == status.primary?.index ? 0 : 1, $0.name) < ($1.index == status.primary?.index ? 0 : 1, $1.name) }
        if !stallUplinks.isEmpty {
            out.family("reachd_interface_stalled", .gauge,
                       "1 while the apps' traffic over the uplink goes unanswered (a data stall suspected), 0 otherwise.")
            for interface in stallUplinks { out.sample("reachd_interface_stalled", ["interface": interface.name], interface.stall != nil) }
        }

        // Each uplink whose quality is measured: the primary first, then the standbys.
        let measured = status.interfaces
            .filter { $0.linkQuality != nil }
            .sorted { ($0.index == status.primary?.index ? 0 : 1, $0.name) < ($1.index == status.primary?.index ? 0 : 1, $1.name) }
        if !measured.isEmpty {
            out.family("reachd_link_quality", .gauge,
                       "How good each uplink is, measured (Apple's linkQuality): 1 for its current level, 0 for the others.")
            for interface in measured {
                for level in LinkQuality.Level.allCases {
                    out.sample("reachd_link_quality", ["interface": interface.name, "level": level.rawValue],
                               level == interface.linkQuality?.level)
                }
            }
            out.family("reachd_link_effective_type", .gauge,
                       "The 2G/3G/4G each uplink behaves like (the web's effectiveType): 1 for the current type, 0 for the others; absent until measured.")
            for interface in measured where interface.linkQuality?.effectiveType != nil {
                for type in LinkQuality.EffectiveType.allCases {
                    out.sample("reachd_link_effective_type", ["interface": interface.name, "type": type.rawValue],
                               type == interface.linkQuality?.effectiveType)
                }
            }
            let timed = measured.compactMap { interface in
                interface.linkQuality?.rttMs.flatMap { $0.isFinite ? (interface.name, $0 / 1000) : nil }
            }
            if !timed.isEmpty {
                out.family("reachd_link_rtt_seconds", .gauge,
                           "Each uplink's round-trip time: the time-weighted median of its measurements.")
                for (name, seconds) in timed { out.sample("reachd_link_rtt_seconds", ["interface": name], seconds) }
            }
        }

        if let cellular = status.cellular {
            if let generation = cellular.generation.flatMap(Self.generationNumber) {
                out.family("reachd_cellular_generation", .gauge, "Cellular generation of the modem's access technology (2 to 5); absent without a modem or when unknown.")
                out.sample("reachd_cellular_generation", [:], Double(generation))
            }
            if let quality = cellular.signalQuality {
                out.family("reachd_cellular_signal_quality_ratio", .gauge, "Signal quality ModemManager reports, 0 to 1; absent without a modem.")
                out.sample("reachd_cellular_signal_quality_ratio", [:], Double(quality) / 100)
            }
            if let roaming = cellular.roaming {
                out.family("reachd_cellular_roaming", .gauge, "1 when the modem is roaming; absent without a modem.")
                out.sample("reachd_cellular_roaming", [:], roaming)
            }
        }

        writeWiFi(status, into: &out)

        out.family("reachd_status_seconds_total", .counter, "Seconds spent in each status since reachd started.")
        for value in NetworkStatus.allCases {
            out.sample("reachd_status_seconds_total", ["status": value.rawValue], sample.statusSeconds[value] ?? 0)
        }
        out.family("reachd_connectivity_seconds_total", .counter, "Seconds spent in each connectivity verdict since reachd started.")
        for value in Connectivity.allCases {
            out.sample("reachd_connectivity_seconds_total", ["state": value.rawValue], sample.connectivitySeconds[value] ?? 0)
        }

        out.family("reachd_events_total", .counter, "Reachability events sent, by reason.")
        let reasons = Reason.Code.allCases.filter { sample.events[$0] != nil }
        for reason in reasons {
            out.sample("reachd_events_total", ["reason": reason.rawValue], Double(sample.events[reason] ?? 0))
        }

        out.family("reachd_data_stalls_total", .counter, "Data stalls suspected since reachd started, by interface.")
        var stallCounts = sample.dataStalls
        for interface in stallUplinks where stallCounts[interface.name] == nil { stallCounts[interface.name] = 0 }
        for name in stallCounts.keys.sorted() {
            out.sample("reachd_data_stalls_total", ["interface": name], Double(stallCounts[name] ?? 0))
        }

        out.family("reachd_last_change_timestamp_seconds", .gauge, "Unix time of the last reachability event (of the start before the first).")
        out.sample("reachd_last_change_timestamp_seconds", [:], (sample.lastChange.timeIntervalSince1970 * 1000).rounded() / 1000)

        out.family("reachd_probe_duration_seconds", .histogram, "Round trip of the connectivity checks that got an HTTP answer.")
        for bucket in sample.probeDurations.cumulativeBuckets {
            out.sample("reachd_probe_duration_seconds_bucket", ["le": Self.number(bucket.upperBound)], Double(bucket.count))
        }
        out.sample("reachd_probe_duration_seconds_sum", [:], sample.probeDurations.sum)
        out.sample("reachd_probe_duration_seconds_count", [:], Double(sample.probeDurations.count))

        out.family("reachd_probes_total", .counter,
                   "Connectivity checks made, by method (api: a captive-portal API, http: the HTTP check) and verdict.")
        for (method, counts) in [("api", sample.apiProbes), ("http", sample.probes)] {
            for value in Connectivity.allCases where counts[value] != nil {
                out.sample("reachd_probes_total", ["method": method, "result": value.rawValue], Double(counts[value] ?? 0))
            }
        }

        out.family("reachd_subscribers", .gauge, "Clients subscribed to reachability events.")
        out.sample("reachd_subscribers", [:], Double(sample.subscribers))

        out.family("reachd_connections_rejected_total", .counter, "Client connections reachd closed, by reason.")
        for reason in sample.connectionsRejected.keys.sorted() {
            out.sample("reachd_connections_rejected_total", ["reason": reason], Double(sample.connectionsRejected[reason] ?? 0))
        }

        // Before the overruns, which stay the last line (readers look for it).
        if let connected = sample.systemBusConnected {
            out.family("reachd_system_bus_connected", .gauge,
                       "1 while the D-Bus system bus is connected (ModemManager, NetworkManager and logind followed), 0 while it is being retried.")
            out.sample("reachd_system_bus_connected", [:], connected ? 1 : 0)
        }

        out.family("reachd_netlink_overruns_total", .counter, "Times the kernel overran reachd's netlink socket (each followed by a full re-read).")
        out.sample("reachd_netlink_overruns_total", [:], Double(sample.netlinkOverruns))
        return out.text
    }

    /// `2G` → 2 … `5G` → 5.
    static func generationNumber(_ generation: String) -> Int? {
        guard generation.count == 2, generation.last == "G", let digit = generation.first?.wholeNumberValue,
              (2...5).contains(digit) else { return nil }
        return digit
    }

    /// A sample value as Prometheus writes it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A label value with `\`, `"` and newlines escaped as the text format wants, and other
    /// control characters as `TerminalText` writes them (an interface may be named with an ESC
    /// in it): the value a scraper stores reads `\x1b` as `reachctl` shows it, and no dashboard
    /// or terminal gets a raw control.
    public static func escapeLabelValue(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case _ where TerminalText.needsEscape(scalar):
                // `\x1b`, its one backslash escaped in turn.
                result += "\\" + TerminalText.escaped(String(scalar))
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    enum MetricType: String { case gauge, counter, histogram }

    struct Writer {
        var text = ""

        init() { text.reserveCapacity(6 * 1024) }

        mutating func family(_ name: String, _ type: MetricType, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n"
        }

        mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: Bool) {
            sample(name, labels, value ? 1 : 0)
        }

        mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: Double) {
            text += name
            if !labels.isEmpty {
                text += "{"
                text += labels.map { "\($0.key)=\"\(PrometheusExposition.escapeLabelValue($0.value))\"" }.joined(separator: ",")
                text += "}"
            }
            text += " \(PrometheusExposition.number(value))\n"
        }
    }
}
