import Foundation
import ReachabilityCore
import Testing
import TestSupport

/// The measured link quality end to end, on a real kernel: reachd in a namespace whose uplink is
/// a userspace delay line (this kernel has no netem), an app's TCP connection through it, and
/// reachd's sock_diag dumps seeing that connection's RTT. Three lines of their own, because each
/// waits on the estimator's real time constants (a 20 s half-life, 30 s before better).
@Suite(.serialized, .dedicatedThreads) struct QualityClassSystemTests {}
/// The step worse (see `QualityClassSystemTests`).
@Suite(.serialized, .dedicatedThreads) struct QualityStepSystemTests {}
/// The step better, beside the step worse: each waits a minute or more.
@Suite(.serialized, .dedicatedThreads) struct QualityRecoverySystemTests {}
/// The hold tests: alternation and idleness (see `QualityClassSystemTests`).
@Suite(.serialized, .dedicatedThreads) struct QualityHoldSystemTests {}

/// reachd behind a delay line: `host` runs it, `network` is the internet (a server at
/// `line.remoteAddress`), the line's end in `host` (`dl0`) its uplink.
final class MeasuredUplink: @unchecked Sendable {
    let host: TestNamespace
    let network: TestNamespace
    let line: DelayLine
    let daemon: DaemonUnderTest
    private(set) var traffic: TrafficLoop?

    /// `interval`: `[LinkQuality] Interval=` (nil: the default, 10 s); `extra`: more configuration.
    static func config(interval: String?, kind: String? = "ethernet", modemManager: Bool = false, extra: String = "") -> String {
        var text = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=\(modemManager ? "yes" : "no")\n"
        if let kind { text += "[Interfaces]\nKind.dl0=\(kind)\n" }
        text += "[LinkQuality]\n"
        if let interval { text += "Interval=\(interval)\n" }
        return text + extra
    }

    init(tag: String, rtt: TimeInterval, subnet: Int, config: String, environment: [String: String] = [:],
         prepare: (TestNamespace) throws -> Void = { _ in }) throws {
        host = try TestNamespace(tag: tag)
        network = try TestNamespace(tag: tag + "n")
        do {
            try prepare(host)
            line = try DelayLine(host: host, network: network, settings: .init(rtt: rtt), subnet: subnet)
            daemon = try DaemonUnderTest(namespace: host, config: config, environment: environment)
        } catch {
            host.destroy(); network.destroy()
            throw error
        }
    }

    /// An app's connection through the line: a small request and answer every 200 ms.
    func startTraffic() throws {
        traffic = try TrafficLoop(through: line)
    }

    func stopTraffic() {
        traffic?.stop()
        traffic = nil
    }

    func status() throws -> Status {
        try WireJSON.decoder().decode(Status.self, from: Data(daemon.reachctl(["status", "--json"]).stdout.utf8))
    }

    /// `dl0`'s quality in the current status.
    func quality(of name: String = "dl0") -> LinkQuality? {
        (try? status())?.interfaces.first { $0.name == name }?.linkQuality
    }

    /// Seconds until `condition` holds for dl0's measured quality, nil when it did not within `timeout`.
    func secondsUntil(timeout: TimeInterval, of name: String = "dl0", _ condition: (LinkQuality) -> Bool) -> TimeInterval? {
        let start = Date()
        let met = waitUntil(timeout: timeout) { self.quality(of: name).map(condition) == true }
        return met ? Date().timeIntervalSince(start) : nil
    }

    func destroy() {
        stopTraffic()
        daemon.stop()
        line.stop()
        host.destroy()
        network.destroy()
    }
}

private func measured(_ quality: LinkQuality, _ level: LinkQuality.Level, _ type: LinkQuality.EffectiveType?) -> Bool {
    quality.source == .passive && quality.level == level && quality.effectiveType == type
}

extension QualityClassSystemTests {
    /// Each RTT its class, measured from the app's traffic alone (the check is off): Chromium's
    /// thresholds and Apple's levels, on a real socket's srtt.
    @Test(.needsRoot(), arguments: [
        (0.05, LinkQuality.Level.good, LinkQuality.EffectiveType.fourG),
        (0.4, .moderate, .threeG),
        (1.5, .minimal, .twoG),
        (2.5, .minimal, .slow2g),
    ])
    func eachRoundTripItsClass(rtt: TimeInterval, level: LinkQuality.Level, type: LinkQuality.EffectiveType) throws {
        let uplink = try MeasuredUplink(tag: "lq", rtt: rtt, subnet: 91, config: MeasuredUplink.config(interval: "1s"))
        defer { uplink.destroy() }
        // Before any traffic: the technology's guess, said to be one.
        #expect(waitUntil(timeout: 15) { uplink.quality()?.source == .default }, "\(uplink.daemon.child.stderr)")
        #expect(uplink.quality()?.effectiveType == .fourG)
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { measured($0, level, type) } != nil,
                "\(String(describing: uplink.quality())) \(uplink.daemon.child.stderr)")
        let quality = try #require(uplink.quality())
        let rttMs = try #require(quality.rttMs)
        #expect(abs(rttMs - rtt * 1000) < rtt * 1000 * 0.25, "\(rttMs) ms for \(rtt) s")
        #expect(quality.samples > 0 && !quality.stale)
        // The path's quality is its primary's, and reachctl says it.
        let status = try uplink.status()
        #expect(status.linkQuality?.level == level && status.linkQuality?.effectiveType == type)
        let line = try uplink.daemon.reachctl(["status"]).stdout
        #expect(line.contains("quality: \(level.rawValue) (\(type.rawValue), "), "\(line)")
    }

    /// A modem's radio at −125 dBm RSRP (no bars) caps a fast line at minimal.
    @Test(.needsRoot())
    func aWeakRadioCapsTheClass() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "dl0", access: ModemAccessTechnology.lte.rawValue)
        try mm.setSignal(0, "Lte", ["rsrp": -125, "rsrq": -15])
        let uplink = try MeasuredUplink(tag: "lr", rtt: 0.05, subnet: 92,
                                        config: MeasuredUplink.config(interval: "1s", kind: nil, modemManager: true),
                                        environment: [systemBusVariable: bus.address])
        defer { uplink.destroy() }
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { $0.source == .passive } != nil, "\(uplink.daemon.child.stderr)")
        let quality = try #require(uplink.quality())
        #expect(quality.level == .minimal, "\(quality)")
        #expect(quality.signal?.technology == "lte" && quality.signal?.rsrp == -125 && quality.signal?.level == 0)
        #expect(try uplink.status().status == .wwan4G)
    }

    /// A standby uplink's quality is its own: its change of class is an event of `interfaces`
    /// alone, the path's quality unmoved.
    @Test(.needsRoot())
    func aStandbysQualityMovesOnlyInterfaces() throws {
        var primaryNetwork: TestNamespace?
        let uplink = try MeasuredUplink(tag: "ls", rtt: 1.5, subnet: 93, config: MeasuredUplink.config(interval: "1s")) { host in
            let network = try TestNamespace(tag: "lsp")
            primaryNetwork = network
            _ = try VethUplink(host: host, uplink: network, inner: "eth0", outer: "up0", subnet: 94, metric: 50)
        }
        defer { uplink.destroy(); primaryNetwork?.destroy() }
        // The app's server is reached through the standby line; everything else through eth0.
        try uplink.line.host.ip("route add \(uplink.line.remoteAddress)/32 dev dl0")
        #expect(waitUntil(timeout: 15) { (try? uplink.status().primary?.name) == "eth0" }, "\(uplink.daemon.child.stderr)")
        let monitor = try SystemTests.EventTruthTests.Monitor(uplink.daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        let before = try uplink.status().linkQuality
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { measured($0, .minimal, .twoG) } != nil, "\(uplink.daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { monitor.events.contains { $0.reason.code == Reason.Code.qualityChanged } })
        let changes = monitor.events.filter { $0.reason.code == Reason.Code.qualityChanged }
        #expect(changes.allSatisfy { $0.changes == ["interfaces"] && $0.reason.interface == "dl0" }, "\(changes.map(\.changes))")
        #expect(LinkQuality.differsInClass(try uplink.status().linkQuality, before) == false)
    }
}

extension QualityStepSystemTests {
    /// At the default interval (one dump every 10 s), a step to a 2G RTT shows. The estimator
    /// takes about 30 s once the sockets' RTT has moved, but a socket's own smoothed RTT (the
    /// kernel's, gaining 1/8 per acknowledgement) needs some 21 round trips to pass 1.4 s: an
    /// app with one request per round trip shows the step after about a minute (60 s here).
    @Test(.needsRoot())
    func aStepWorseShows() throws {
        let uplink = try MeasuredUplink(tag: "lt", rtt: 0.05, subnet: 95, config: MeasuredUplink.config(interval: nil))
        defer { uplink.destroy() }
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { measured($0, .good, .fourG) } != nil, "\(uplink.daemon.child.stderr)")

        uplink.line.rtt = 1.5
        let worse = uplink.secondsUntil(timeout: 90) { $0.effectiveType == .twoG }
        #expect(worse.map { $0 <= 80 } == true, "2g after \(String(describing: worse)) s")
    }
}

extension QualityRecoverySystemTests {
    /// The way back from 2G shows only after 30 s within the threshold, and within about a minute.
    @Test(.needsRoot())
    func aStepBetterShowsAfterItHeld() throws {
        let uplink = try MeasuredUplink(tag: "lb", rtt: 1.5, subnet: 98, config: MeasuredUplink.config(interval: nil))
        defer { uplink.destroy() }
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 60) { measured($0, .minimal, .twoG) } != nil, "\(uplink.daemon.child.stderr)")

        uplink.line.rtt = 0.05
        let better = uplink.secondsUntil(timeout: 120) { $0.effectiveType == .fourG && $0.level == .good }
        #expect(better.map { $0 >= 30 && $0 <= 90 } == true, "4g after \(String(describing: better)) s")
    }
}

extension QualityHoldSystemTests {
    /// An RTT that swings across the 3g threshold (204 ms) every 5 s changes the class at most
    /// once a minute.
    @Test(.needsRoot())
    func anRTTSwingingAcrossAThresholdDoesNotFlap() throws {
        let uplink = try MeasuredUplink(tag: "la", rtt: 0.15, subnet: 96, config: MeasuredUplink.config(interval: nil))
        defer { uplink.destroy() }
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { $0.source == .passive } != nil, "\(uplink.daemon.child.stderr)")
        let monitor = try SystemTests.EventTruthTests.Monitor(uplink.daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        let end = Date().addingTimeInterval(65)
        var slow = true
        while Date() < end {
            uplink.line.rtt = slow ? 0.3 : 0.15
            slow.toggle()
            Thread.sleep(forTimeInterval: 5)
        }
        let changes = monitor.events.filter { $0.reason.code == Reason.Code.qualityChanged }.map(\.timestamp)
        for (earlier, later) in zip(changes, changes.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 60, "changes at \(changes)")
        }
        #expect(changes.count <= 2, "\(changes)")
    }

    /// A link that stops moving data keeps its class, is marked stale, then unknown.
    @Test(.needsRoot())
    func anIdleLinkKeepsItsClassThenGoesStale() throws {
        let uplink = try MeasuredUplink(tag: "li", rtt: 0.4, subnet: 97,
                                        config: MeasuredUplink.config(interval: "1s", extra: "StaleAfter=5s\nUnknownAfter=12s\n"))
        defer { uplink.destroy() }
        try uplink.startTraffic()
        #expect(uplink.secondsUntil(timeout: 40) { measured($0, .moderate, .threeG) } != nil, "\(uplink.daemon.child.stderr)")
        uplink.stopTraffic()
        #expect(uplink.secondsUntil(timeout: 20) { $0.stale } != nil)
        let stale = try #require(uplink.quality())
        #expect(stale.level == .moderate && stale.effectiveType == .threeG, "\(stale)")
        #expect(try uplink.daemon.reachctl(["status"]).stdout.contains("quality: moderate (3g, "))
        #expect(uplink.secondsUntil(timeout: 30) { $0.level == .unknown } != nil, "\(String(describing: uplink.quality()))")
    }
}
