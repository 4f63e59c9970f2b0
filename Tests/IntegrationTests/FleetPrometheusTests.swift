import Foundation
import ReachabilityCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Prometheus (Debian's package) in a test namespace: its own temporary storage, its web API on
/// the namespace's loopback only, and nothing to reach but the namespaces the test made.
final class PrometheusUnderTest: @unchecked Sendable {
    let namespace: TestNamespace
    let directory: String
    let child: Child

    init(in namespace: TestNamespace, config: String, rules: String) throws {
        let prometheusBinary = try prometheusPath()
        self.namespace = namespace
        directory = try temporaryDirectory()
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        try rules.write(toFile: directory + "/reachd-alerts.yml", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        child = try Child(ipCommand, ["netns", "exec", namespace.name, prometheusBinary,
                                     "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                                     "--web.listen-address=127.0.0.1:9090", "--log.level=warn"])
        guard waitUntil(timeout: 60, { curl(in: namespace, "http://127.0.0.1:9090/-/ready") != nil || !child.isRunning }),
              child.isRunning else {
            stop()
            throw SetupError(description: "prometheus did not become ready: \(child.stderr)")
        }
    }

    /// One PromQL query through `/api/v1/query`: each series' labels and value.
    func query(_ promql: String) -> [(labels: [String: String], value: Double)]? {
        let encoded = promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        guard let body = curl(in: namespace, "http://127.0.0.1:9090/api/v1/query?query=\(encoded)"),
              let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              json["status"] as? String == "success",
              let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]] else { return nil }
        return result.compactMap { series in
            guard let labels = series["metric"] as? [String: String], let value = series["value"] as? [Any],
                  value.count == 2, let text = value[1] as? String, let number = Double(text) else { return nil }
            return (labels, number)
        }
    }

    /// A query's answer as `label value → value` for one label.
    func query(_ promql: String, by label: String) -> [String: Double]? {
        query(promql).map { Dictionary($0.map { ($0.labels[label] ?? "", $0.value) }, uniquingKeysWith: { a, _ in a }) }
    }

    func stop() {
        if child.isRunning { child.signal(SIGTERM) }
        child.wait(timeout: 20)
        _ = try? sh("rm -rf '\(directory)'", check: false)
    }

    deinit { stop() }
}

extension ServiceSystemTests {
/// Three machines, each a network namespace running the built reachd with `[Metrics] Listen=` on
/// its veth to a hub namespace, where Prometheus scrapes them every second with the shipped
/// alerting rules (their `for:` shortened to 2 s in a test copy). One machine stays fine, one
/// moves behind a captive portal (a python server answering a redirect in a namespace of its
/// own), one goes offline; PromQL through Prometheus's HTTP API must say so, the fleet queries of
/// docs/metrics.md must answer, the time counters rise, and the alerts fire — also "reachd down" for a
/// daemon that stops.
@Suite struct FleetPrometheusTests {
    /// The "Many machines" queries of docs/metrics.md.
    static let offlineNow = "reachd_reachable == 0"
    static let behindPortal = #"reachd_connectivity{state="portal"} == 1"#
    static let on2G = #"reachd_status{status="wwan2G"} == 1"#
    static let flapping = "sum without (reason) (increase(reachd_events_total[15m])) > 10"
    static let offlineMinutes30Days = #"sum by (instance) (increase(reachd_status_seconds_total{status="notReachable"}[30d])) / 60"#
    static let byKind = "count by (status) (reachd_status == 1)"

    @Test func theDocumentationShowsTheseQueries() throws {
        let page = try String(contentsOfFile: Binaries.packageRoot + "/docs/metrics.md", encoding: .utf8)
        for query in [Self.offlineNow, Self.behindPortal, Self.on2G, Self.flapping, Self.offlineMinutes30Days, Self.byKind] {
            #expect(page.contains("| `\(query)` |"), "\(query)")
        }
    }

    static func machineConfig(_ i: Int) -> String {
        """
        [Connectivity]
        URL=http://10.88.9.9:8080/generate_204
        Interval=60
        Timeout=2
        [Cellular]
        ModemManager=no
        [Metrics]
        Listen=10.88.0.1\(i):9464
        """
    }

    static let prometheusConfig = """
    global:
      scrape_interval: 1s
      scrape_timeout: 900ms
      evaluation_interval: 1s
    rule_files:
      - reachd-alerts.yml
    scrape_configs:
      - job_name: reachd
        static_configs:
          - targets: ['10.88.0.11:9464']
            labels: {machine: fine}
          - targets: ['10.88.0.12:9464']
            labels: {machine: portal}
          - targets: ['10.88.0.13:9464']
            labels: {machine: offline}
    """

    /// The shipped rules with every `for:` of minutes shortened to 2 s.
    static func testRules() throws -> String {
        let shipped = try String(contentsOfFile: contribPrometheus + "/reachd-alerts.yml", encoding: .utf8)
        let rules = shipped.replacingOccurrences(of: #"for: \d+m"#, with: "for: 2s", options: .regularExpression)
        #expect(rules != shipped && !rules.contains(#/for: \d+m/#))
        return rules
    }

    @Test(.needsRoot(), .requires(.prometheus, .curl)) func prometheusSeesTheFleetChangeAndAlerts() throws {
        let hub = try TestNamespace(tag: "hub"), portal = try TestNamespace(tag: "ptl")
        let machines = try (1...3).map { try TestNamespace(tag: "m\($0)") }
        defer { (machines + [hub, portal]).forEach { $0.destroy() } }

        // The hub: a bridge for the machines, and "the internet" (10.88.9.9) answering 204.
        try hub.ip("link add br0 type bridge")
        try hub.ip("addr add 10.88.0.1/24 dev br0")
        try hub.ip("link set br0 up")
        try hub.ip("addr add 10.88.9.9/32 dev lo")
        for (index, machine) in machines.enumerated() {
            let i = index + 1
            try machine.ip("link add eth0 type veth peer name m\(i) netns \(hub.name)")
            try hub.ip("link set m\(i) master br0")
            try hub.ip("link set m\(i) up")
            try machine.ip("addr add 10.88.0.1\(i)/24 dev eth0")
            try machine.ip("link set eth0 up")
            try machine.ip("route add default via 10.88.0.1 dev eth0")
        }
        // The portal: a second uplink of machine 2, whose 10.88.9.9 answers with a redirect.
        try machines[1].ip("link add eth1 type veth peer name up0 netns \(portal.name)")
        try portal.ip("addr add 10.88.2.1/24 dev up0")
        try portal.ip("link set up0 up")
        try portal.ip("addr add 10.88.9.9/32 dev lo")
        try machines[1].ip("addr add 10.88.2.2/24 dev eth1")
        try machines[1].ip("link set eth1 up")
        let internet = try ProbeServer(in: hub, port: 8080, mode: .noContent)
        defer { internet.stop() }
        let login = try ProbeServer(in: portal, port: 8080, mode: .redirect("http://login.portal.test/"))
        defer { login.stop() }

        let daemons = try machines.enumerated().map { try DaemonUnderTest(namespace: $1, config: Self.machineConfig($0 + 1)) }
        let prometheus = try PrometheusUnderTest(in: hub, config: Self.prometheusConfig, rules: try Self.testRules())
        defer { prometheus.stop() }

        // All three scraped, all fine.
        #expect(waitUntil(timeout: 60) { prometheus.query(#"count(up{job="reachd"} == 1)"#)?.first?.value == 3 },
                "\(prometheus.query(#"up"#) ?? [])")
        #expect(waitUntil(timeout: 30) { prometheus.query(#"count(reachd_connectivity{state="full"} == 1)"#)?.first?.value == 3 })
        #expect(prometheus.query(Self.byKind, by: "status") == ["ethernet": 3])
        #expect(prometheus.query(Self.offlineNow)?.isEmpty == true)

        // Machine 3 loses its default route; machine 2's default route moves to the portal.
        try machines[2].ip("route del default")
        try machines[1].ip("route replace default via 10.88.2.1 dev eth1")

        #expect(waitUntil(timeout: 30) {
            prometheus.query(Self.byKind, by: "status") == ["ethernet": 2, "notReachable": 1]
                && prometheus.query("count by (state) (reachd_connectivity == 1)", by: "state") == ["full": 1, "portal": 1, "none": 1]
        }, "\(prometheus.query("reachd_status == 1") ?? []) \(prometheus.query("reachd_connectivity == 1") ?? [])")
        #expect(prometheus.query(Self.offlineNow, by: "machine") == ["offline": 0])
        #expect(prometheus.query(Self.behindPortal, by: "machine") == ["portal": 1])
        #expect(prometheus.query(Self.on2G)?.isEmpty == true)
        #expect(prometheus.query(Self.flapping)?.isEmpty == true)
        #expect(prometheus.query(#"reachd_primary_info{machine="portal"}"#)?.first?.labels["interface"] == "eth1")
        #expect(prometheus.query(#"reachd_primary_info{machine="offline"}"#)?.isEmpty == true)
        #expect(prometheus.query(#"reachd_events_total{machine="offline", reason="routeRemoved"}"#)?.first?.value == 1)
        #expect((prometheus.query(#"reachd_probes_total{machine="portal", method="http", result="portal"}"#)?.first?.value ?? 0) >= 1)

        // The time counters: offline time rises for the offline machine only.
        let offlineSeconds = #"reachd_status_seconds_total{status="notReachable", machine="offline"}"#
        let before = prometheus.query(offlineSeconds)?.first?.value ?? -1
        #expect(waitUntil(timeout: 20) { (prometheus.query(offlineSeconds)?.first?.value ?? -1) >= before + 2 })
        #expect(waitUntil(timeout: 20) {
            let minutes = prometheus.query(Self.offlineMinutes30Days, by: "instance") ?? [:]
            return (minutes["10.88.0.13:9464"] ?? 0) > 0 && minutes["10.88.0.11:9464"] == 0 && minutes["10.88.0.12:9464"] == 0
        }, "\(prometheus.query(Self.offlineMinutes30Days) ?? [])")
        #expect((prometheus.query(#"increase(reachd_status_seconds_total{status="ethernet", machine="fine"}[10s])"#)?.first?.value ?? 0) > 0)

        // The shipped alerts fire for the offline and the portal machine, and for no other.
        let firing = #"ALERTS{alertstate="firing"}"#
        #expect(waitUntil(timeout: 30) {
            let alerts = Set((prometheus.query(firing) ?? []).map { "\($0.labels["alertname"] ?? "") \($0.labels["machine"] ?? "")" })
            return alerts.contains("ReachdOffline offline") && alerts.contains("ReachdBehindCaptivePortal portal")
        }, "\(prometheus.query(firing) ?? [])")
        let alerts = Set((prometheus.query(firing) ?? []).map { "\($0.labels["alertname"] ?? "") \($0.labels["machine"] ?? "")" })
        #expect(alerts == ["ReachdOffline offline", "ReachdBehindCaptivePortal portal"])

        // The portal lets machine 2 through: its alert ends. reachd on machine 1 stops: "reachd down".
        try login.set(.noContent)
        #expect(daemons[0].stop() == 0)
        #expect(waitUntil(timeout: 60) {
            let alerts = Set((prometheus.query(firing) ?? []).map { "\($0.labels["alertname"] ?? "") \($0.labels["machine"] ?? "")" })
            return alerts == ["ReachdOffline offline", "ReachdDown fine"]
        }, "\(prometheus.query(firing) ?? [])")
        #expect(prometheus.child.isRunning, "\(prometheus.child.stderr)")
    }
}
}
