import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
private let second: UInt64 = 1_000_000_000

private let eth0 = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                             addresses: ["10.0.0.2/24"], metered: false)
private let wwan0 = Interface(name: "wwan0", index: 3, kind: .wwan, up: true, carrier: true, operstate: "up",
                              addresses: ["10.9.0.2/24"], metered: false)

private func status(_ s: NetworkStatus, _ c: Connectivity, primary: Interface? = eth0) -> Status {
    var status = Status.initial(since: t0)
    status.status = s
    status.reachable = s != .notReachable
    status.connectivity = c
    status.primary = s == .notReachable ? nil : primary
    status.ipv4 = s != .notReachable
    return status
}

private func event(_ sequence: Int, _ code: Reason.Code, _ current: Status, at seconds: Double = 0) -> ReachabilityEvent {
    ReachabilityEvent(sequence: sequence, timestamp: t0.addingTimeInterval(seconds), event: .reachabilityChanged,
                      reason: Reason(code: code), previous: nil, current: current)
}

/// The sample lines of a rendering (no comments), for lookups.
private func samples(_ text: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        result[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return result
}

@Suite struct MetricsRecorderTests {
    /// Each row: the (clock second, status, connectivity) changes after a start in
    /// notReachable/none at second 0, sampled at `end`; the expected seconds per status and verdict.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let changes: [(at: UInt64, NetworkStatus, Connectivity)]
        let end: UInt64
        let statusSeconds: [NetworkStatus: Double]
        let connectivitySeconds: [Connectivity: Double]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "no change", changes: [], end: 10,
            statusSeconds: [.notReachable: 10], connectivitySeconds: [.none: 10]),
        Row(name: "up after 3 s, full after 5 s", changes: [(3, .ethernet, .unknown), (5, .ethernet, .full)], end: 12,
            statusSeconds: [.notReachable: 3, .ethernet: 9], connectivitySeconds: [.none: 3, .unknown: 2, .full: 7]),
        Row(name: "flaps count every stretch", changes: [(1, .wifi, .full), (2, .notReachable, .none), (4, .wifi, .full),
                                                         (7, .notReachable, .none), (8, .wwan2G, .portal)], end: 20,
            statusSeconds: [.notReachable: 4, .wifi: 4, .wwan2G: 12], connectivitySeconds: [.none: 4, .full: 4, .portal: 12]),
        Row(name: "two changes in the same nanosecond", changes: [(2, .ethernet, .full), (2, .wifi, .limited)], end: 3,
            statusSeconds: [.notReachable: 2, .wifi: 1], connectivitySeconds: [.none: 2, .limited: 1]),
        Row(name: "a reading older than the last counts as no time", changes: [(5, .ethernet, .full), (4, .wifi, .full)], end: 6,
            statusSeconds: [.notReachable: 5, .wifi: 1], connectivitySeconds: [.none: 5, .full: 1]),
    ]

    @Test(arguments: rows) func timeInStateIsExact(row: Row) {
        var recorder = MetricsRecorder(status: status(.notReachable, .none), now: 100 * second, startedAt: t0)
        for (index, change) in row.changes.enumerated() {
            recorder.record(event(index + 1, .linkUp, status(change.1, change.2)), now: (100 + change.at) * second)
        }
        let sample = recorder.sample(now: (100 + row.end) * second, version: "1")
        for value in NetworkStatus.allCases {
            #expect(sample.statusSeconds[value] == row.statusSeconds[value] ?? 0, "status \(value)")
        }
        for value in Connectivity.allCases {
            #expect(sample.connectivitySeconds[value] == row.connectivitySeconds[value] ?? 0, "connectivity \(value)")
        }
        // The counters account for every nanosecond since the start, once.
        #expect(sample.statusSeconds.values.reduce(0, +) == Double(row.end))
        #expect(sample.connectivitySeconds.values.reduce(0, +) == Double(row.end))
    }

    @Test func countersOnlyRiseAcrossChangesAndSamples() {
        var recorder = MetricsRecorder(status: status(.ethernet, .full), now: 0, startedAt: t0)
        var previous = recorder.sample(now: 0, version: "1")
        var elapsed: UInt64 = 0
        let script: [(UInt64, NetworkStatus, Connectivity)] = [
            (1, .notReachable, .none), (2, .ethernet, .unknown), (2, .ethernet, .full), (3, .wifi, .portal), (9, .ethernet, .full),
        ]
        var sequence = 1
        for (at, s, c) in script {
            // Sampling before and after each change, at odd moments — also after the moment of a
            // change that is recorded later (a scrape between the change and its recording) —
            // never sees a counter fall.
            for moment in [at * second - 1, at * second, at * second + 7] {
                let sample = recorder.sample(now: moment, version: "1")
                for value in NetworkStatus.allCases { #expect(sample.statusSeconds[value]! >= previous.statusSeconds[value]!) }
                for value in Connectivity.allCases { #expect(sample.connectivitySeconds[value]! >= previous.connectivitySeconds[value]!) }
                previous = sample
                elapsed = max(elapsed, moment)
            }
            recorder.record(event(sequence, .linkUp, status(s, c)), now: at * second)
            sequence += 1
        }
        // And still every nanosecond is counted exactly once.
        let last = recorder.sample(now: 60 * second, version: "1")
        #expect(last.statusSeconds.values.reduce(0, +) == 60)
        #expect(last.statusSeconds[.ethernet]! > 0 && elapsed == 9 * second + 7)
        // The same moment twice gives the same figures.
        let once = recorder.sample(now: 70 * second, version: "1")
        let twice = recorder.sample(now: 70 * second, version: "1")
        #expect(once == twice)
    }

    @Test func replacingTheStatusCountsTimeButNoEvent() {
        var recorder = MetricsRecorder(status: status(.notReachable, .none), now: 0, startedAt: t0)
        recorder.replaceStatus(status(.ethernet, .unknown), now: 4 * second)
        let sample = recorder.sample(now: 6 * second, version: "1")
        #expect(sample.statusSeconds[.notReachable] == 4 && sample.statusSeconds[.ethernet] == 2)
        #expect(sample.events.values.reduce(0, +) == 0)
        #expect(sample.status.status == .ethernet)
    }

    @Test func eventsAreCountedByReasonAndEveryReasonStartsAtZero() {
        var recorder = MetricsRecorder(status: status(.notReachable, .none), now: 0, startedAt: t0)
        let reasons = Reason.Code.allCases.filter { $0 != .initial }
        #expect(Set(recorder.events.keys) == Set(reasons))
        #expect(recorder.events.values.allSatisfy { $0 == 0 })
        recorder.record(event(1, .carrierLost, status(.notReachable, .none), at: 5), now: 1)
        recorder.record(event(2, .carrierGained, status(.ethernet, .unknown), at: 6), now: 2)
        recorder.record(event(3, .carrierLost, status(.notReachable, .none), at: 7.25), now: 3)
        let sample = recorder.sample(now: 4, version: "1")
        #expect(sample.events[.carrierLost] == 2 && sample.events[.carrierGained] == 1 && sample.events[.linkUp] == 0)
        #expect(sample.lastChange == t0.addingTimeInterval(7.25))
    }

    @Test func probesAreCountedByVerdictAndTimedWhenAnswered() {
        var recorder = MetricsRecorder(status: status(.ethernet, .full), now: 0, startedAt: t0)
        #expect(recorder.probes == [.portal: 0, .limited: 0, .full: 0])
        recorder.recordProbe(Probe(url: "http://x/", result: .full, httpStatus: 204, rttMs: 3, checkedAt: t0))
        recorder.recordProbe(Probe(url: "http://x/", result: .full, httpStatus: 204, rttMs: 120, checkedAt: t0))
        recorder.recordProbe(Probe(url: "http://x/", result: .portal, httpStatus: 302, rttMs: 7000, checkedAt: t0))
        recorder.recordProbe(Probe(url: "http://x/", result: .limited, error: "timed out", checkedAt: t0))
        #expect(recorder.probes == [.portal: 1, .limited: 1, .full: 2])
        #expect(recorder.probeDurations.count == 3)
        #expect(abs(recorder.probeDurations.sum - 7.123) < 1e-9)
        // Captive-portal API requests are counted apart, and not timed with the HTTP checks.
        #expect(recorder.apiProbes == [.portal: 0, .limited: 0, .full: 0])
        recorder.recordProbe(Probe(url: "https://x/api", result: .portal, httpStatus: 200, rttMs: 9, checkedAt: t0), api: true)
        #expect(recorder.apiProbes == [.portal: 1, .limited: 0, .full: 0])
        #expect(recorder.probes == [.portal: 1, .limited: 1, .full: 2] && recorder.probeDurations.count == 3)
        #expect(recorder.sample(now: 1, version: "1").apiProbes == [.portal: 1, .limited: 0, .full: 0])
    }
}

@Suite struct MetricsDataStallTests {
    static func stall(at seconds: Double) -> DataStall {
        DataStall(since: t0.addingTimeInterval(seconds), method: .tcp, failRate: 0.9, sentSinceReceive: 20, periodMs: 10_000)
    }

    /// eth0 the primary and wwan0 a standby, each with the stall given or none.
    static func stalled(eth0 e: DataStall? = nil, wwan0 w: DataStall? = nil) -> Status {
        var current = status(.ethernet, .full)
        var first = eth0, second = wwan0
        first.stall = e
        second.stall = w
        second.connectivity = .full
        current.primary = first
        current.interfaces = [first, second]
        return current
    }

    @Test func eachStallIsCountedOnceOnItsInterface() {
        var recorder = MetricsRecorder(status: Self.stalled(), now: 0, startedAt: t0)
        #expect(recorder.dataStalls.isEmpty)
        let first = Self.stall(at: 1)
        recorder.record(event(1, .dataStall, Self.stalled(eth0: first)), now: 1 * second)
        #expect(recorder.dataStalls == ["eth0": 1])
        // The same stall in the next events (its check's verdict, anything else) is not a new one.
        recorder.record(event(2, .dataStall, Self.stalled(eth0: first)), now: 2 * second)
        recorder.record(event(3, .linkUp, Self.stalled(eth0: first, wwan0: Self.stall(at: 3))), now: 3 * second)
        #expect(recorder.dataStalls == ["eth0": 1, "wwan0": 1])
        // Over, then again: two.
        recorder.record(event(4, .dataStall, Self.stalled()), now: 4 * second)
        recorder.record(event(5, .dataStall, Self.stalled(eth0: Self.stall(at: 5))), now: 5 * second)
        #expect(recorder.dataStalls == ["eth0": 2, "wwan0": 1])
        // One that ended and began again between two statuses is still new; a status taken
        // without an event counts it as well, and showing it again does not.
        recorder.replaceStatus(Self.stalled(eth0: Self.stall(at: 6)), now: 6 * second)
        recorder.record(event(6, .probeResult, Self.stalled(eth0: Self.stall(at: 6))), now: 7 * second)
        let sample = recorder.sample(now: 8 * second, version: "1")
        #expect(sample.dataStalls == ["eth0": 3, "wwan0": 1])
        let text = PrometheusExposition.render(sample)
        #expect(samples(text)[#"reachd_data_stalls_total{interface="eth0"}"#] == "3")
        #expect(samples(text)[#"reachd_data_stalls_total{interface="wwan0"}"#] == "1")
        #expect(samples(text)[#"reachd_interface_stalled{interface="eth0"}"#] == "1")
        #expect(samples(text)[#"reachd_interface_stalled{interface="wwan0"}"#] == "0")
    }

    @Test func everyUplinkIsListedFromZeroAndAGoneOneKeepsItsCount() {
        var recorder = MetricsRecorder(status: Self.stalled(), now: 0, startedAt: t0)
        var sample = recorder.sample(now: 0, version: "1")
        var lines = PrometheusExposition.render(sample).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("reachd_data_stalls_total{") }
            == [#"reachd_data_stalls_total{interface="eth0"} 0"#, #"reachd_data_stalls_total{interface="wwan0"} 0"#])
        #expect(lines.filter { $0.hasPrefix("reachd_interface_stalled{") }
            == [#"reachd_interface_stalled{interface="eth0"} 0"#, #"reachd_interface_stalled{interface="wwan0"} 0"#])
        #expect(lines.contains("# TYPE reachd_data_stalls_total counter") && lines.contains("# TYPE reachd_interface_stalled gauge"))
        // Offline: no uplink to show, but a counter once counted stays.
        sample.status = status(.notReachable, .none)
        sample.dataStalls = ["wlan9": 4]
        lines = PrometheusExposition.render(sample).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("reachd_data_stalls_total{") } == [#"reachd_data_stalls_total{interface="wlan9"} 4"#])
        #expect(!lines.contains { $0.hasPrefix("reachd_interface_stalled") })
    }
}

@Suite struct MetricsHistogramTests {
    @Test func bucketsAreCumulativeAndEndWithInf() {
        var histogram = MetricsHistogram(upperBounds: [0.1, 1, 10])
        for value in [0.05, 0.1, 0.5, 1, 11, -1, .nan, .infinity] { histogram.observe(value) }
        #expect(histogram.cumulativeBuckets.map(\.count) == [2, 4, 4, 5])
        #expect(histogram.cumulativeBuckets.last?.upperBound == .infinity)
        #expect(histogram.count == 5)
        #expect(histogram.sum == 12.65)
    }
}

@Suite struct PrometheusExpositionTests {
    static func fullSample() -> MetricsSample {
        var current = status(.wwan4G, .portal, primary: wwan0)
        current.expensive = true
        current.ipv4Connectivity = .portal
        current.vpn = Interface(name: "tun0", index: 9, kind: .vpn, up: true, carrier: true, operstate: "up", addresses: [], metered: false)
        var measuredWwan0 = wwan0
        measuredWwan0.linkQuality = LinkQuality(level: .minimal, effectiveType: .twoG, rttMs: 1400, samples: 9, source: .passive,
                                                measuredAt: t0)
        current.linkQuality = measuredWwan0.linkQuality
        current.interfaces = [measuredWwan0,
                              Interface(name: "wlan0", index: 5, kind: .wifi, up: true, carrier: true, operstate: "up",
                                        addresses: ["192.168.1.20/24"], metered: false, connectivity: .full,
                                        linkQuality: LinkQuality(level: .good, effectiveType: .fourG, rttMs: 30, samples: 3,
                                                                 source: .probe, measuredAt: t0),
                                        stall: DataStall(since: t0, method: .tcp, failRate: 1, sentSinceReceive: 12, periodMs: 10_000)),
                              Interface(name: "eth1", index: 4, kind: .ethernet, up: true, carrier: true, operstate: "up",
                                        addresses: [], metered: false)]
        current.cellular = Cellular(generation: "4G", accessTechnology: "lte", modem: "/org/freedesktop/ModemManager1/Modem/0",
                                    interface: "wwan0", signalQuality: 71, roaming: true)
        var histogram = MetricsHistogram()
        histogram.observe(0.02)
        histogram.observe(3)
        return MetricsSample(version: "0.1.0", status: current, statusSeconds: [.wwan4G: 12.5, .notReachable: 3],
                             connectivitySeconds: [.portal: 10, .none: 5.5], events: [.linkUp: 2, .modemChanged: 1, .resync: 0],
                             lastChange: Date(timeIntervalSince1970: 1_800_000_123.4567), probes: [.portal: 4, .full: 0],
                             apiProbes: [.portal: 2], probeDurations: histogram, subscribers: 3, connectionsRejected: ["subscriber_too_slow": 1, "malformed_message": 2],
                             netlinkOverruns: 5, dataStalls: ["wlan0": 2, "eth9": 1])
    }

    /// Each row: a value of the full sample's rendering and what it must be.
    static let expectations: [(String, String)] = [
        (#"reachd_info{version="0.1.0"}"#, "1"),
        ("reachd_reachable", "1"),
        (#"reachd_status{status="wwan4G"}"#, "1"),
        (#"reachd_status{status="ethernet"}"#, "0"),
        (#"reachd_status{status="notReachable"}"#, "0"),
        (#"reachd_connectivity{state="portal"}"#, "1"),
        (#"reachd_connectivity{state="full"}"#, "0"),
        (#"reachd_connectivity_family{family="ipv4",state="portal"}"#, "1"),
        (#"reachd_connectivity_family{family="ipv4",state="full"}"#, "0"),
        (#"reachd_connectivity_family{family="ipv6",state="none"}"#, "1"),
        (#"reachd_connectivity_family{family="ipv6",state="portal"}"#, "0"),
        ("reachd_expensive", "1"),
        ("reachd_ipv4", "1"),
        ("reachd_ipv6", "0"),
        ("reachd_vpn_active", "1"),
        ("reachd_simulated", "0"),
        (#"reachd_primary_info{interface="wwan0",kind="wwan"}"#, "1"),
        (#"reachd_interface_connectivity{interface="wwan0",state="portal"}"#, "1"),
        (#"reachd_interface_connectivity{interface="wwan0",state="full"}"#, "0"),
        (#"reachd_interface_connectivity{interface="wlan0",state="full"}"#, "1"),
        (#"reachd_interface_connectivity{interface="wlan0",state="portal"}"#, "0"),
        (#"reachd_interface_stalled{interface="wwan0"}"#, "0"),
        (#"reachd_interface_stalled{interface="wlan0"}"#, "1"),
        (#"reachd_data_stalls_total{interface="wlan0"}"#, "2"),
        (#"reachd_data_stalls_total{interface="wwan0"}"#, "0"),
        (#"reachd_data_stalls_total{interface="eth9"}"#, "1"),
        (#"reachd_link_quality{interface="wwan0",level="minimal"}"#, "1"),
        (#"reachd_link_quality{interface="wwan0",level="good"}"#, "0"),
        (#"reachd_link_quality{interface="wlan0",level="good"}"#, "1"),
        (#"reachd_link_quality{interface="wlan0",level="unknown"}"#, "0"),
        (#"reachd_link_effective_type{interface="wwan0",type="2g"}"#, "1"),
        (#"reachd_link_effective_type{interface="wwan0",type="slow-2g"}"#, "0"),
        (#"reachd_link_effective_type{interface="wlan0",type="4g"}"#, "1"),
        (#"reachd_link_rtt_seconds{interface="wwan0"}"#, "1.4"),
        (#"reachd_link_rtt_seconds{interface="wlan0"}"#, "0.03"),
        ("reachd_cellular_generation", "4"),
        ("reachd_cellular_signal_quality_ratio", "0.71"),
        ("reachd_cellular_roaming", "1"),
        (#"reachd_status_seconds_total{status="wwan4G"}"#, "12.5"),
        (#"reachd_status_seconds_total{status="notReachable"}"#, "3"),
        (#"reachd_status_seconds_total{status="wifi"}"#, "0"),
        (#"reachd_connectivity_seconds_total{state="none"}"#, "5.5"),
        (#"reachd_connectivity_seconds_total{state="full"}"#, "0"),
        (#"reachd_events_total{reason="linkUp"}"#, "2"),
        (#"reachd_events_total{reason="modemChanged"}"#, "1"),
        (#"reachd_events_total{reason="resync"}"#, "0"),
        ("reachd_last_change_timestamp_seconds", "1800000123.457"),
        (#"reachd_probe_duration_seconds_bucket{le="0.025"}"#, "1"),
        (#"reachd_probe_duration_seconds_bucket{le="2.5"}"#, "1"),
        (#"reachd_probe_duration_seconds_bucket{le="5"}"#, "2"),
        (#"reachd_probe_duration_seconds_bucket{le="+Inf"}"#, "2"),
        ("reachd_probe_duration_seconds_sum", "3.02"),
        ("reachd_probe_duration_seconds_count", "2"),
        (#"reachd_probes_total{method="http",result="portal"}"#, "4"),
        (#"reachd_probes_total{method="http",result="full"}"#, "0"),
        (#"reachd_probes_total{method="api",result="portal"}"#, "2"),
        ("reachd_subscribers", "3"),
        (#"reachd_connections_rejected_total{reason="malformed_message"}"#, "2"),
        (#"reachd_connections_rejected_total{reason="subscriber_too_slow"}"#, "1"),
        ("reachd_netlink_overruns_total", "5"),
    ]

    @Test(arguments: expectations) func fullSampleRendersEachValue(series: String, value: String) {
        #expect(samples(PrometheusExposition.render(Self.fullSample()))[series] == value)
    }

    /// The system bus's gauge: 1 or 0 while reachd uses the bus, absent when it does not.
    @Test func systemBusGauge() {
        var sample = Self.fullSample()
        #expect(samples(PrometheusExposition.render(sample))["reachd_system_bus_connected"] == nil)
        sample.systemBusConnected = true
        #expect(samples(PrometheusExposition.render(sample))["reachd_system_bus_connected"] == "1")
        sample.systemBusConnected = false
        let text = PrometheusExposition.render(sample)
        #expect(samples(text)["reachd_system_bus_connected"] == "0")
        #expect(text.contains("# TYPE reachd_system_bus_connected gauge"))
    }

    @Test func everyStatusAndVerdictIsListedOnce() {
        let text = PrometheusExposition.render(Self.fullSample())
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("reachd_status{") }.count == NetworkStatus.allCases.count)
        #expect(lines.filter { $0.hasPrefix("reachd_status{") && $0.hasSuffix(" 1") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("reachd_connectivity{") }.count == Connectivity.allCases.count)
        #expect(lines.filter { $0.hasPrefix("reachd_connectivity{") && $0.hasSuffix(" 1") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("reachd_connectivity_family{") }.count == 2 * Connectivity.allCases.count)
        #expect(lines.filter { $0.hasPrefix("reachd_connectivity_family{") && $0.hasSuffix(" 1") }.count == 2)
        #expect(lines.filter { $0.hasPrefix("reachd_status_seconds_total{") }.count == NetworkStatus.allCases.count)
        #expect(lines.filter { $0.hasPrefix("reachd_probes_total{") }.count == 3)   // only the verdicts counted
    }

    @Test func everyFamilyHasHelpAndTypeBeforeItsSamplesAndAppearsOnce() {
        let text = PrometheusExposition.render(Self.fullSample())
        var typed: [String: String] = [:]
        var helped: Set<String> = []
        var finished: Set<String> = []
        var current: String?
        for line in text.split(separator: "\n").map(String.init) {
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            if line.hasPrefix("# HELP ") { helped.insert(parts[2]); continue }
            if line.hasPrefix("# TYPE ") {
                #expect(typed[parts[2]] == nil, "\(parts[2]) typed twice")
                typed[parts[2]] = parts[3]
                if let current { finished.insert(current) }
                current = parts[2]
                continue
            }
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            let family = typed[name] != nil ? name
                : ["_bucket", "_sum", "_count"].compactMap { name.hasSuffix($0) ? String(name.dropLast($0.count)) : nil }.first ?? name
            #expect(family == current, "\(name) outside its family")
            #expect(!finished.contains(family))
            #expect(helped.contains(family))
        }
        for (name, type) in typed where type == "counter" { #expect(name.hasSuffix("_total"), "\(name)") }
        #expect(text.hasSuffix("\n"))
    }

    @Test func withoutPrimaryOrModemThoseMetricsAreAbsent() {
        var sample = Self.fullSample()
        sample.status = status(.notReachable, .none)
        let text = PrometheusExposition.render(sample)
        #expect(!text.contains("reachd_primary_info"))
        #expect(!text.contains("reachd_cellular_"))
        #expect(samples(text)["reachd_reachable"] == "0")
        #expect(samples(text)["reachd_vpn_active"] == "0")
        #expect(samples(text)[#"reachd_status{status="notReachable"}"#] == "1")
    }

    /// A connected Wi-Fi device's figures, per interface, in node_exporter's units; none of its
    /// text (the network's name, the access point) becomes a label.
    @Test func wifiFiguresPerConnectedDevice() {
        var sample = Self.fullSample()
        var wlan0 = Interface(name: "wlan0", index: 5, kind: .wifi, up: true, carrier: true, operstate: "up", addresses: [],
                              metered: false)
        wlan0.wifi = WiFi(ssid: "ca\"fe", bssid: "02:11:22:33:44:55", frequencyMHz: 5180, band: .band5GHz, signalDbm: -61,
                          strengthPercent: 59, bars: 3, txBitrateKbps: 866_700, owner: .iwd)
        var wlan1 = wlan0
        wlan1.name = "wlan1"; wlan1.index = 6
        wlan1.wifi = WiFi(ssid: "other", strengthPercent: 40, owner: .networkManager)
        sample.status.interfaces += [wlan0, wlan1]
        let text = PrometheusExposition.render(sample)
        let values = samples(text)
        #expect(values[#"reachd_wifi_station_signal_dbm{interface="wlan0"}"#] == "-61")
        #expect(values[#"reachd_wifi_station_signal_dbm{interface="wlan1"}"#] == nil)
        #expect(values[#"reachd_wifi_station_bars{interface="wlan0"}"#] == "3")
        #expect(values[#"reachd_wifi_station_strength_ratio{interface="wlan0"}"#] == "0.59")
        #expect(values[#"reachd_wifi_station_strength_ratio{interface="wlan1"}"#] == "0.4")
        #expect(values[#"reachd_wifi_station_transmit_bitrate_bytes_per_second{interface="wlan0"}"#] == "108337500")
        #expect(values[#"reachd_wifi_interface_frequency_hertz{interface="wlan0"}"#] == "5180000000")
        #expect(!text.contains("cafe") && !text.contains("ca\\\"fe") && !text.contains("02:11:22"))
        #expect(!PrometheusExposition.render(Self.fullSample()).contains("reachd_wifi_"))
    }

    @Test func linkQualityIsOneHotPerMeasuredUplinkAndAbsentUntilMeasured() {
        let lines = PrometheusExposition.render(Self.fullSample()).split(separator: "\n")
        // Two uplinks measured, every level listed for each, one of them set; the primary first.
        let quality = lines.filter { $0.hasPrefix("reachd_link_quality{") }
        #expect(quality.count == 2 * LinkQuality.Level.allCases.count)
        #expect(quality.filter { $0.hasSuffix(" 1") }.count == 2)
        #expect(quality.first?.contains(#"interface="wwan0""#) == true)
        #expect(!lines.contains { $0.contains(#"interface="eth1""#) })
        var sample = Self.fullSample()
        sample.status.linkQuality = nil
        sample.status.interfaces = sample.status.interfaces.map { var interface = $0; interface.linkQuality = nil; return interface }
        #expect(!PrometheusExposition.render(sample).contains("reachd_link_"))
    }

    @Test func aSimulationShows() {
        var sample = Self.fullSample()
        sample.status.simulated = true
        #expect(samples(PrometheusExposition.render(sample))["reachd_simulated"] == "1")
    }

    @Test func aModemWithUnknownFactsLeavesOnlyThoseOut() {
        var sample = Self.fullSample()
        sample.status.cellular = Cellular(generation: nil, accessTechnology: nil, modem: "/m/0", interface: "wwan0",
                                          signalQuality: 0, roaming: nil)
        let text = PrometheusExposition.render(sample)
        #expect(!text.contains("reachd_cellular_generation"))
        #expect(!text.contains("reachd_cellular_roaming"))
        #expect(samples(text)["reachd_cellular_signal_quality_ratio"] == "0")
    }

    @Test(arguments: [
        (1.0, "1"), (0.0, "0"), (-3.0, "-3"), (0.71, "0.71"), (12.5, "12.5"), (1e-05, "1e-05"),
        (1e20, "1e+20"), (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"),
        (1_800_000_123.457, "1800000123.457"),
    ])
    func numbers(value: Double, text: String) {
        #expect(PrometheusExposition.number(value) == text)
    }

    @Test(arguments: [
        ("eth0", "eth0"), (#"a"b"#, #"a\"b"#), (#"back\slash"#, #"back\\slash"#), ("two\nlines", #"two\nlines"#),
        ("ünïcode", "ünïcode"), ("e\u{1B}x", #"e\\x1bx"#), ("bell\u{7}\u{9B}", #"bell\\x07\\u{9b}"#),
    ])
    func labelValuesAreEscaped(raw: String, escaped: String) {
        #expect(PrometheusExposition.escapeLabelValue(raw) == escaped)
    }

    @Test func anInterfaceNameWithQuotesStaysOneLabel() {
        var sample = Self.fullSample()
        sample.status.primary?.name = "we\"ird\\"
        #expect(PrometheusExposition.render(sample).contains(#"reachd_primary_info{interface="we\"ird\\",kind="wwan"} 1"#))
    }
}

@Suite struct MetricsHTTPExchangeTests {
    typealias Request = MetricsHTTPExchange.Request

    static let parses: [(String, String, Request)] = [
        ("Prometheus' scrape", "GET /metrics HTTP/1.1\r\nHost: 10.0.0.2:9464\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
         .complete(method: "GET", target: "/metrics")),
        ("bare newlines, HTTP/1.0", "GET /metrics HTTP/1.0\n\n", .complete(method: "GET", target: "/metrics")),
        ("not finished", "GET /metrics HTTP/1.1\r\nHost: x\r\n", .incomplete),
        ("nothing yet", "", .incomplete),
        ("half a method", "GE", .incomplete),
        ("a TLS hello, cut short", "\u{16}\u{3}\u{1}\u{2}", .malformed(status: 400, reason: "bad request line")),
        ("junk without a newline", "hello there", .malformed(status: 400, reason: "bad request line")),
        ("a method too long to be one", String(repeating: "A", count: 17), .malformed(status: 400, reason: "bad request line")),
        ("a query", "HEAD /metrics?x=1 HTTP/1.1\r\n\r\n", .complete(method: "HEAD", target: "/metrics?x=1")),
        ("POST without body", "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", .complete(method: "POST", target: "/metrics")),
        ("a body", "GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", .malformed(status: 400, reason: "a request body is not accepted")),
        ("chunked body", "POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .malformed(status: 400, reason: "a request body is not accepted")),
        ("garbage", "\u{1}\u{2}garbage\r\n\r\n", .malformed(status: 400, reason: "bad request line")),
        ("lower-case method", "get /metrics HTTP/1.1\r\n\r\n", .malformed(status: 400, reason: "bad request line")),
        ("no version", "GET /metrics\r\n\r\n", .malformed(status: 400, reason: "bad request line")),
        ("HTTP/2", "GET /metrics HTTP/2.0\r\n\r\n", .malformed(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served")),
        ("header without colon", "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", .malformed(status: 400, reason: "bad header line")),
        ("TLS hello", "\u{16}\u{3}\u{1}\u{0}\n\n", .malformed(status: 400, reason: "bad request line")),
    ]

    @Test(arguments: parses) func parse(name: String, text: String, expected: Request) {
        #expect(MetricsHTTPExchange.parse(Array(text.utf8)) == expected, "\(name)")
    }

    @Test func invalidUTF8IsMalformed() {
        #expect(MetricsHTTPExchange.parse(Array("GET /".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\n\r\n".utf8))
                == .malformed(status: 400, reason: "request head is not UTF-8"))
    }

    @Test func aHeadOverTheLimitIsRefusedFinishedOrNot() {
        let filler = "X-Filler: " + String(repeating: "a", count: MetricsHTTPExchange.maxHeadBytes) + "\r\n"
        #expect(MetricsHTTPExchange.parse(Array(("GET /metrics HTTP/1.1\r\n" + filler).utf8)) == .headTooLarge)
        #expect(MetricsHTTPExchange.parse(Array(("GET /metrics HTTP/1.1\r\n" + filler + "\r\n").utf8)) == .headTooLarge)
        // Just under the limit is fine.
        let fits = "GET /metrics HTTP/1.1\r\nX: " + String(repeating: "a", count: MetricsHTTPExchange.maxHeadBytes - 32) + "\r\n\r\n"
        #expect(MetricsHTTPExchange.parse(Array(fits.utf8)) == .complete(method: "GET", target: "/metrics"))
    }

    /// Each row: a request, the status answered, and whether the metrics were rendered and sent.
    static let answers: [(Request, Int, Bool)] = [
        (.complete(method: "GET", target: "/metrics"), 200, true),
        (.complete(method: "GET", target: "/metrics?name[]=x"), 200, true),
        (.complete(method: "HEAD", target: "/metrics"), 200, false),
        (.complete(method: "POST", target: "/metrics"), 405, false),
        (.complete(method: "DELETE", target: "/metrics"), 405, false),
        (.complete(method: "GET", target: "/"), 404, false),
        (.complete(method: "GET", target: "/metrics/"), 404, false),
        (.complete(method: "GET", target: "/../metrics"), 404, false),
        (.complete(method: "POST", target: "/other"), 404, false),
        (.malformed(status: 400, reason: "bad request line"), 400, false),
        (.malformed(status: 505, reason: "x"), 505, false),
        (.headTooLarge, 431, false),
    ]

    @Test(arguments: answers) func respond(request: Request, status: Int, sendsMetrics: Bool) throws {
        var rendered = false
        let response = try #require(MetricsHTTPExchange.respond(to: request) { rendered = true; return "reachd_up 1\n" })
        #expect(response.status == status)
        let text = String(decoding: response.bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.hasSuffix("reachd_up 1\n") == sendsMetrics)
        if status == 200 {
            #expect(rendered)
            #expect(text.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
            #expect(text.contains("\r\nContent-Length: 12\r\n"))   // HEAD too: the size of what GET would send
        } else {
            #expect(!rendered)
        }
        if status == 405 { #expect(text.contains("\r\nAllow: GET, HEAD\r\n")) }
    }

    @Test func incompleteIsNoAnswerYet() {
        #expect(MetricsHTTPExchange.respond(to: .incomplete) { "" } == nil)
    }
}

@Suite struct MetricsConfigurationTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464, MetricsListenAddress.Family.ipv4),
        ("0.0.0.0:1", "0.0.0.0", 1, .ipv4),
        ("[::1]:9464", "::1", 9464, .ipv6),
        ("[::]:65535", "::", 65535, .ipv6),
        ("[2001:db8::5]:80", "2001:db8::5", 80, .ipv6),
    ])
    func listenAddresses(text: String, host: String, port: Int, family: MetricsListenAddress.Family) throws {
        let address = try MetricsListenAddress(text)
        #expect(address.host == host && address.port == port && address.family == family)
        #expect(address.description == text)
        let c = try ReachdConfiguration.parse("[Metrics]\nListen=\(text)\n", file: "f")
        #expect(c.metrics.listen == address)
    }

    @Test(arguments: [
        ("localhost:9464", "f:2: [Metrics] Listen=localhost:9464: bad IPv4 address 'localhost' (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("127.0.0.1", "f:2: [Metrics] Listen=127.0.0.1: missing port (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("127.0.0.1:0", "f:2: [Metrics] Listen=127.0.0.1:0: bad port '0', not 1 to 65535 (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("127.0.0.1:65536", "f:2: [Metrics] Listen=127.0.0.1:65536: bad port '65536', not 1 to 65535 (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("::1:9464", "f:2: [Metrics] Listen=::1:9464: an IPv6 address needs brackets, e.g. [::1]:9464 (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("[::1]9464", "f:2: [Metrics] Listen=[::1]9464: missing port (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("[::1:9464", "f:2: [Metrics] Listen=[::1:9464: bad address: missing ']' (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("[fe80::1%eth0]:9464", "f:2: [Metrics] Listen=[fe80::1%eth0]:9464: bad IPv6 address 'fe80::1%eth0' (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
        ("1.2.3.4:+80", "f:2: [Metrics] Listen=1.2.3.4:+80: bad port '+80', not 1 to 65535 (expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"),
    ])
    func badListenValuesNameFileLineAndKey(value: String, message: String) {
        do {
            _ = try ReachdConfiguration.parse("[Metrics]\nListen=\(value)\n", file: "f")
            Issue.record("\(value) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func textfileKeys() throws {
        let c = try ReachdConfiguration.parse("[Metrics]\nTextfileDirectory=/var/lib/node_exporter\nTextfileInterval=1min\n", file: "f")
        #expect(c.metrics.textfileDirectory == "/var/lib/node_exporter")
        #expect(c.metrics.textfileIntervalSeconds == 60)
        let reset = try ReachdConfiguration.parse("[Metrics]\nTextfileDirectory=\nTextfileInterval=\nListen=\n", file: "f", into: c)
        #expect(reset.metrics == ReachdConfiguration.MetricsSection())
        #expect(ReachdConfiguration().metrics.listen == nil && ReachdConfiguration().metrics.textfileDirectory == nil)
    }

    @Test(arguments: [
        ("TextfileDirectory=relative/dir", "f:2: [Metrics] TextfileDirectory=relative/dir: bad path (must be absolute)"),
        ("TextfileInterval=0", "f:2: [Metrics] TextfileInterval=0: bad time span (expected 1 second to 24 hours)"),
        ("TextfileInterval=500ms", "f:2: [Metrics] TextfileInterval=500ms: bad time span (expected 1 second to 24 hours)"),
        ("TextfileInterval=1e300", "f:2: [Metrics] TextfileInterval=1e300: bad time span (expected seconds, e.g. 15 or 1min)"),
        ("TextfileInterval=99999999999", "f:2: [Metrics] TextfileInterval=99999999999: bad time span (expected 1 second to 24 hours)"),
    ])
    func badTextfileValues(line: String, message: String) {
        do {
            _ = try ReachdConfiguration.parse("[Metrics]\n\(line)\n", file: "f")
            Issue.record("\(line) was accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
