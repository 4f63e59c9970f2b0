import Foundation
import ReachabilityCore
import ReachabilityLinux
import Testing
import TestSupport

/// Stands in for the monitor: a status the test sets, and the verdicts the checker hands over.
final class FakeProbeTarget: ProbeTarget, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Status
    private var received: [Probe?] = []
    private var receivedPaths: [ProbePath?] = []

    init(status: Status) { current = status }

    var status: Status {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
    func setProbe(_ probe: Probe?, path: ProbePath?) { lock.withLock { received.append(probe); receivedPaths.append(path) } }
    var probes: [Probe?] { lock.withLock { received } }
    /// The path each verdict was published for.
    var paths: [ProbePath?] { lock.withLock { receivedPaths } }
    var results: [Connectivity?] { probes.map { $0?.result } }
}

/// Collects what a concurrent API hands back.
final class Collector<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [T] = []
    func append(_ value: T) { lock.withLock { stored.append(value) } }
    var values: [T] { lock.withLock { stored } }
}

/// The status the monitor reports for the lab: reachable over eth0, or not at all.
func labStatus(_ lab: ProbeLab, reachable: Bool = true, addresses: [String]? = nil) -> Status {
    var status = Status.initial(since: Date())
    guard reachable else { return status }
    status.status = .ethernet
    status.reachable = true
    status.primary = Interface(name: lab.veth.inner, index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                               addresses: addresses ?? ["\(lab.veth.hostAddress)/24"], metered: false)
    status.interfaces = [status.primary].compactMap { $0 }
    status.gateways = [lab.veth.gatewayAddress]
    status.ipv4 = true
    status.flags = [.reachable]
    return status
}

func checkerConfiguration(_ lab: ProbeLab, interval: TimeInterval = 60, backoff: TimeInterval = 0.5,
                          timeout: TimeInterval = 2) -> ConnectivityChecker.Configuration {
    var configuration = ConnectivityChecker.Configuration()
    configuration.url = lab.baseURL + "/generate_204"
    configuration.intervalSeconds = interval
    configuration.initialBackoff = backoff
    configuration.timeoutSeconds = timeout
    return configuration
}

extension ConnectivitySystemTests {
@Suite struct ConnectivityCheckerTests {
    /// A portal, then the user logs in (the server switches to 204): full is reported on the
    /// backoff path, long before the next regular check.
    @Test(.needsRoot()) func loginAtAPortalIsNoticedOnTheBackoffPath() throws {
        let lab = try ProbeLab(mode: .redirect("/login"))
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        let checker = ConnectivityChecker(configuration: checkerConfiguration(lab, interval: 120), target: target,
                                          networkNamespace: lab.host.name)
        let actions = Collector<ProbeScheduler.Action>()
        checker.observeActions { actions.append($0) }
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results.contains(.portal) })
        #expect(target.probes.first??.portalUrl == lab.baseURL + "/login")
        // Each verdict is handed over with the path it checked, so the monitor applies it to that path only.
        #expect(target.paths.first == ProbePath(labStatus(lab)))
        #expect(ProbePath(labStatus(lab)) != nil)
        try lab.server.set(.noContent)
        #expect(waitUntil(timeout: 30) { target.results.last == .full })

        // What led to full: retries after backoff delays (below the interval), never an interval wait.
        let log = actions.values
        let fullIndex = try #require(log.firstIndex { if case .publish(let p) = $0 { return p?.result == .full } else { return false } })
        let delays = log[..<fullIndex].compactMap { action -> TimeInterval? in
            if case .schedule(let after, _) = action { return after } else { return nil }
        }
        #expect(!delays.isEmpty)
        #expect(delays.allSatisfy { $0 < 120 })
        #expect(delays.first == 0.5)
        #expect(lab.server.requests.count >= 2)
        // After full: back to the interval.
        #expect(waitUntil(timeout: 5) {
            actions.values[fullIndex...].contains { if case .schedule(let after, _) = $0 { return after == 120 } else { return false } }
        })
    }

    /// A check hangs; meanwhile the path changes: the checker is not blocked, checks the new path
    /// at once, and the hanging check's late result is never published.
    @Test(.needsRoot()) func pathChangeDuringAHangingCheck() throws {
        let lab = try ProbeLab(mode: .hang)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        let checker = ConnectivityChecker(configuration: checkerConfiguration(lab, timeout: 20), target: target,
                                          networkNamespace: lab.host.name)
        let actions = Collector<ProbeScheduler.Action>()
        checker.observeActions { actions.append($0) }
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { lab.server.requests.count == 1 })
        try lab.server.set(.noContent)
        try lab.host.ip("addr add 10.77.0.3/24 dev eth0")
        let moved = labStatus(lab, addresses: ["10.77.0.2/24", "10.77.0.3/24"])
        target.status = moved
        checker.statusChanged(moved)
        #expect(waitUntil(timeout: 10) { target.results == [.full] })
        #expect(actions.values.contains(.cancelProbe(id: 1)))
        #expect(lab.server.requests.count == 2)
    }

    /// Uplink gone, the status says not reachable: `none` at once, no check made; a manual
    /// request answers `none` too.
    @Test(.needsRoot()) func notReachablePublishesNoneWithoutChecking() throws {
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        let checker = ConnectivityChecker(configuration: checkerConfiguration(lab), target: target,
                                          networkNamespace: lab.host.name)
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results == [.full] })
        try lab.veth.dropCarrier()
        let offline = labStatus(lab, reachable: false)
        target.status = offline
        checker.statusChanged(offline)
        #expect(waitUntil(timeout: 5) { target.results == [.full, Connectivity.none] })
        let replies = Collector<ConnectivityChecker.Reply>()
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 5) { replies.values.count == 1 })
        if case .probe(let probe) = replies.values.first {
            #expect(probe.result == Connectivity.none)
        } else {
            Issue.record("expected a probe, got \(replies.values)")
        }
        #expect(lab.server.requests.count == 1)

        // Back online: "none" is withdrawn (not checked yet), then the check says full.
        try lab.veth.restoreCarrier()
        target.status = labStatus(lab)
        checker.statusChanged(target.status)
        #expect(waitUntil(timeout: 15) { target.results == [.full, Connectivity.none, nil, .full] })
    }

    /// The checker logs through its sink: every verdict at debug, a failed check at notice,
    /// and a sink at `info` drops the verdicts but keeps the failures.
    @Test(.needsRoot()) func verdictsAndFailuresGoThroughTheSinkAtTheirLevel() throws {
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy() }
        var configuration = checkerConfiguration(lab, timeout: 1)
        configuration.probeMinInterval = 0
        /// A checker whose log, at `threshold`, goes to the collector as `level: message`.
        func logging(at threshold: LogLevel) -> (ConnectivityChecker, FakeProbeTarget, Collector<String>) {
            let lines = Collector<String>()
            let target = FakeProbeTarget(status: labStatus(lab))
            let checker = ConnectivityChecker(configuration: configuration, target: target, networkNamespace: lab.host.name,
                                              log: LogSink(threshold: threshold) { level, message in lines.append("\(level): \(message)") })
            return (checker, target, lines)
        }
        let (checker, target, all) = logging(at: .debug)
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results == [.full] })
        #expect(waitUntil(timeout: 5) { all.values.count == 1 })
        #expect(all.values.first?.hasPrefix("debug: connectivity check on ") == true)
        #expect(all.values.first?.contains("internet: full · HTTP 204") == true, "\(all.values)")

        try lab.server.set(.hang)
        let replies = Collector<ConnectivityChecker.Reply>()
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 15) { replies.values.count == 1 })
        #expect(waitUntil(timeout: 5) { all.values.count == 2 })
        #expect(all.values.last?.hasPrefix("notice: connectivity check on ") == true)
        #expect(all.values.last?.contains("failed: internet: limited") == true, "\(all.values)")

        // The same at `info`: the failure only.
        let (quiet, quietTarget, important) = logging(at: .info)
        quiet.start()
        defer { quiet.stop() }
        #expect(waitUntil(timeout: 15) { quietTarget.results == [.limited] })
        try lab.server.set(.noContent)
        let quietReplies = Collector<ConnectivityChecker.Reply>()
        quiet.probeNow { quietReplies.append($0) }
        #expect(waitUntil(timeout: 15) { quietTarget.results == [.limited, .full] })
        #expect(important.values.count == 1 && important.values.first?.hasPrefix("notice: ") == true, "\(important.values)")
    }

    /// Manual requests during a running check wait for it: one check answers them all.
    @Test(.needsRoot()) func manualRequestsCoalesce() throws {
        let lab = try ProbeLab(mode: .slow(1.5))
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        var configuration = checkerConfiguration(lab, timeout: 10)
        configuration.probeMinInterval = 0   // no sharing of a finished check's verdict here
        let checker = ConnectivityChecker(configuration: configuration, target: target, networkNamespace: lab.host.name)
        let replies = Collector<ConnectivityChecker.Reply>()
        checker.start()
        defer { checker.stop() }
        checker.probeNow { replies.append($0) }
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 20) { replies.values.count == 2 })
        #expect(replies.values.count == 2 && replies.values[0] == replies.values[1])
        #expect(lab.server.requests.count == 1)
        if case .probe(let probe) = replies.values.first {
            #expect(probe.result == .full)
        } else {
            Issue.record("expected a probe, got \(replies.values)")
        }

        // Nothing running now: a request makes a new check.
        try lab.server.set(.noContent)
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 15) { replies.values.count == 3 })
        #expect(lab.server.requests.count == 2)
    }

    @Test(.needsRoot()) func disabledLeavesConnectivityUnknown() throws {
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        var configuration = checkerConfiguration(lab)
        configuration.enabled = false
        let checker = ConnectivityChecker(configuration: configuration, target: target, networkNamespace: lab.host.name)
        checker.start()
        defer { checker.stop() }
        let replies = Collector<ConnectivityChecker.Reply>()
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 5) { replies.values == [.disabled] })
        #expect(target.probes == [nil])
        #expect(lab.server.requests.isEmpty)

        // Enabled by a reload: checks at once.
        configuration.enabled = true
        checker.reconfigure(configuration)
        #expect(waitUntil(timeout: 15) { target.results == [nil, .full] })
    }

    /// An https URL is checked like any other (TLS, the certificate verified): nothing listens
    /// there, so limited, and no warning about the URL.
    @Test func httpsURLIsChecked() throws {
        let status = Status(status: .ethernet, reachable: true, connectivity: .unknown,
                            primary: Interface(name: "lo", index: 1, kind: .loopback, up: true, carrier: true, operstate: "up",
                                               addresses: ["127.0.0.1/8"], metered: false),
                            vpn: nil, cellular: nil, expensive: false, ipv4: true, ipv6: false, gateways: [], flags: [.reachable],
                            interfaces: [], probe: nil, since: Date())
        let target = FakeProbeTarget(status: status)
        var configuration = ConnectivityChecker.Configuration()
        configuration.url = "https://127.0.0.1:9/check"
        let warnings = Collector<String>()
        let checker = ConnectivityChecker(configuration: configuration, target: target,
                                          log: LogSink(threshold: .warning) { level, message in warnings.append("\(level): \(message)") })
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 5) { target.results == [.limited] })
        #expect(target.probes.first??.error?.contains("127.0.0.1:9") == true)
        #expect(warnings.values.isEmpty)
    }
}
}

@Suite struct ConnectivityConfigurationTests {
    @Test func fromReachdConfiguration() throws {
        var file = ReachdConfiguration()
        file.connectivity.enabled = false
        file.connectivity.url = "http://10.1.2.3/check"
        file.connectivity.response = "ok"
        file.connectivity.intervalSeconds = 60
        file.connectivity.timeoutSeconds = 3
        let configuration = ConnectivityChecker.Configuration(file)
        #expect(!configuration.enabled)
        #expect(configuration.url == "http://10.1.2.3/check")
        #expect(configuration.response == "ok")
        #expect(configuration.intervalSeconds == 60)
        #expect(configuration.timeoutSeconds == 3)
        // An empty file gives the documented defaults (docs/configuration.md, reachd.conf(5)).
        let defaults = ConnectivityChecker.Configuration(ReachdConfiguration())
        #expect(defaults.enabled && defaults.url == "http://connectivity-check.ubuntu.com/" && defaults.response == "")
        #expect(defaults.intervalSeconds == 300 && defaults.timeoutSeconds == 5 && defaults.probeMinInterval == 1)
    }
}
