import Foundation
import Testing
@testable import ReachabilityCore

/// `MonitorCore` alone: what the shell must read for it, the dump it asks for as a new input,
/// and which inputs change only their own slice of the picture.
@Suite struct MonitorCoreTests {
    private static let t0 = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 500)
    private static let eth0 = MonitorMachine.eth0, eth1 = MonitorMachine.eth1

    private static func events(_ actions: [MonitorCore.Action]) -> [ReachabilityEvent] { MonitorMachine.events(actions) }

    private static func started() -> MonitorCore { MonitorMachine.startedCore(now: t0) }

    /// sysfs is read for a link the core does not know by that index and name (new or renamed),
    /// and what it says decides the kind; a link that comes again keeps its facts.
    @Test func kindFactsAreAskedForNewAndRenamedLinksOnly() throws {
        var core = Self.started()
        let wlan = LinkFacts(index: 7, name: "wlan0", up: true, carrier: true, operstate: "up")
        #expect(core.needsKindFacts(for: wlan))
        var read = MonitorCore.Read(now: Self.t0)
        core.received(.link(wlan), kindFacts: InterfaceKindFacts(name: "wlan0", devtype: "wlan", hasWireless: true), into: &read)
        _ = core.readEnded(read)
        #expect(!core.needsKindFacts(for: wlan))
        #expect(core.status.interfaces.first { $0.index == 7 }?.kind == .wifi)
        var renamed = wlan
        renamed.name = "wlp2s0"
        #expect(core.needsKindFacts(for: renamed))
        // Gone: a new link at the index is decided afresh, and its lease forgotten.
        var gone = MonitorCore.Read(now: Self.t0)
        core.received(.linkRemoved(index: 7), kindFacts: nil, into: &gone)
        #expect(core.readEnded(gone).contains(.forgetLease(7)))
        #expect(core.needsKindFacts(for: wlan))
    }

    /// An overrun asks for a dump and emits nothing; the dump comes back as an input of its own
    /// and is classified with `resync`.
    @Test func anOverrunAsksForADumpThatComesBackAsAnInput() throws {
        var core = Self.started()
        var read = MonitorCore.Read(now: Self.t0)
        read.overran()
        let actions = core.readEnded(read)
        #expect(actions.contains(.rereadKernel(.overrun)))
        #expect(Self.events(actions).isEmpty)
        var kernel = core.table
        kernel.apply(.link(MonitorMachine.link(Self.eth0, carrier: false)))
        let dumped = core.kernelDumped(kernel, kindFacts: [:], now: Self.t0.adding(0.01))
        let event = try #require(Self.events(dumped).first)
        #expect(event.reason.code == .resync && event.current.primary?.name == "eth1")
        #expect(dumped.contains(.refreshLeases([1, 2, 3])) && dumped.contains(.routingChanged))
        #expect(!dumped.contains { if case .rereadKernel = $0 { true } else { false } })
    }

    /// Routes, rules and addresses make `.routingChanged` (the sampler's route cache); a carrier
    /// change, a verdict or a dump of the apps' sockets does not.
    @Test func routingChangesOnlyForRoutesRulesAndAddresses() {
        var core = Self.started()
        var carrier = MonitorCore.Read(now: Self.t0)
        core.received(.link(MonitorMachine.link(Self.eth0, carrier: false)), kindFacts: nil, into: &carrier)
        #expect(!core.readEnded(carrier).contains(.routingChanged))
        var address = MonitorCore.Read(now: Self.t0)
        core.received(.addressAdded(AddressState(ifindex: Self.eth1, family: .ipv4, address: "10.1.0.3", prefixLength: 24)),
                      kindFacts: nil, into: &address)
        #expect(core.readEnded(address).contains(.routingChanged))
        let path = ProbePath(core.status)
        let verdict = core.verdict(Probe(url: "http://check.test/1", result: .full, httpStatus: 204, rttMs: 40,
                                         checkedAt: Self.t0.wall), path: path, began: nil, now: Self.t0)
        #expect(!verdict.contains(.routingChanged))
        let dump = QualityDump(uptime: Self.t0.uptime, interval: 10, samples: [:])
        #expect(!core.qualityMeasured(dump, now: Self.t0).contains(.routingChanged))
    }

    /// A standby verdict, a dump and a cost hint change their slice of the picture: every other
    /// link's slice is kept as it was (the same object), not built again.
    @Test func deltasKeepTheOtherSlices() throws {
        var core = Self.started()
        let before = core.tracker.indexed.slices
        _ = core.standbyVerdict(Probe(url: "http://check.test/2", result: .full, httpStatus: 204, checkedAt: Self.t0.wall),
                                index: Self.eth1, began: nil, now: Self.t0)
        #expect(core.status.interfaces.first { $0.index == Self.eth1 }?.connectivity == .full)
        let samples = [QualitySample(interfaceIndex: Self.eth0, source: .passive, rttMs: 1500, segmentsSent: 100,
                                     segmentsRetransmitted: 0, bytesReceived: 1000)]
        for second in 0..<3 {
            let now = Self.t0.adding(Double(second) * 10)
            _ = core.qualityMeasured(QualityDump(uptime: now.uptime, interval: 10, samples: [Self.eth0: samples]), now: now)
        }
        #expect(core.status.linkQuality?.rttMs != nil)
        for (index, slice) in before {
            #expect(core.tracker.indexed.slices[index] === slice, "slice \(index) was built again")
        }
        // The lease's hint: that link alone is classified again.
        let cost = core.leaseMetered(true, index: Self.eth0, now: Self.t0.adding(30))
        let event = try #require(Self.events(cost).first)
        #expect(event.reason.code == .costChanged && event.current.expensive)
        #expect(core.tracker.indexed.slices[Self.eth1] === before[Self.eth1])
        #expect(core.tracker.indexed.slices[1] === before[1])
    }

    /// `[LinkQuality] Enabled=` turned off and on: the estimator, started afresh, is told the
    /// uplinks again (the core does not skip them as already known).
    @Test func qualityTurnedOffAndOnFollowsTheUplinksAgain() {
        var core = Self.started()
        #expect(core.scheduler.quality.indexes == [Self.eth0, Self.eth1])
        var off = core.configuration
        off.linkQuality.enabled = false
        _ = core.reconfigured(off, kindFacts: [:], now: Self.t0)
        #expect(core.scheduler.quality.indexes.isEmpty && core.status.linkQuality == nil)
        var on = off
        on.linkQuality.enabled = true
        _ = core.reconfigured(on, kindFacts: [:], now: Self.t0.adding(1))
        #expect(core.scheduler.quality.indexes == [Self.eth0, Self.eth1])
        #expect(core.status.linkQuality != nil)
    }

    /// A dump of idle sockets changes no figure: nothing is classified, nothing published.
    @Test func anIdleDumpClassifiesNothing() {
        var core = Self.started()
        let actions = core.qualityMeasured(QualityDump(uptime: Self.t0.uptime, interval: 10, samples: [:]), now: Self.t0)
        #expect(!actions.contains(.publish))
        #expect(Self.events(actions).isEmpty)
    }

    /// A dump whose traffic over the primary goes unanswered: an event `dataStall` showing the
    /// stall, and the path's check asked for at once; that check's verdict moves connectivity
    /// with `dataStall` too; a working verdict clears the stall; a standby's stall asks for its own check.
    @Test func aStallIsShownAndTheCheckItAsksForCarriesItsReason() throws {
        var core = Self.started()
        let path = try #require(ProbePath(core.status))
        _ = core.verdict(Probe(url: "http://check.test/", result: .full, checkedAt: Self.t0.wall), path: path,
                         began: Self.t0.uptime, now: Self.t0)
        _ = core.qualityMeasured(QualityDump(uptime: 510, interval: nil, samples: [:]), now: Self.t0.adding(10))
        let dead = StallTally(sent: 14, received: 0, retransmitted: 14)
        let actions = core.qualityMeasured(QualityDump(uptime: 520, interval: 10, samples: [:], stalls: [Self.eth0: dead, Self.eth1: dead]),
                                           now: Self.t0.adding(20))
        let event = try #require(Self.events(actions).first)
        #expect(event.reason.code == .dataStall && event.reason.interface == "eth0", "\(event.reason)")
        #expect(event.current.primary?.stall?.sentSinceReceive == 14)
        #expect(event.current.interfaces.first { $0.index == Self.eth1 }?.stall != nil, "a standby uplink shows its own")
        #expect(event.current.connectivity == .full, "the traffic alone does not move connectivity")
        #expect(actions.contains(.recheck(index: Self.eth0, path: true)) && actions.contains(.recheck(index: Self.eth1, path: false)))

        let failed = Probe(url: "http://check.test/", result: .limited, checkedAt: Self.t0.adding(21).wall)
        let verdict = Self.events(core.verdict(failed, path: path, began: Self.t0.adding(20).uptime, now: Self.t0.adding(23)))
        #expect(verdict.first?.reason.code == .dataStall && verdict.first?.current.connectivity == .limited)

        let working = Probe(url: "http://check.test/", result: .full, checkedAt: Self.t0.adding(24).wall)
        let cleared = Self.events(core.verdict(working, path: path, began: Self.t0.adding(24).uptime, now: Self.t0.adding(25)))
        #expect(cleared.first?.reason.code == .dataStall && cleared.first?.current.primary?.stall == nil)
        #expect(cleared.first?.current.connectivity == .full)
    }
}
