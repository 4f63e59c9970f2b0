import Foundation
import Testing
@testable import ReachabilityCore

@Suite struct MonitorSchedulerTests {
    private static let t0 = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 500)

    private static func probe(_ url: String, _ result: Connectivity = .full) -> Probe {
        Probe(url: url, result: result, httpStatus: result == .full ? 204 : nil, checkedAt: t0.wall)
    }

    /// The timers `actions` arm.
    private static func armed(_ actions: [MonitorScheduler.Action]) -> [MonitorScheduler.Timer] {
        actions.compactMap { if case .arm(let timer, _) = $0 { timer } else { nil } }
    }

    private static func evaluations(_ actions: [MonitorScheduler.Action]) -> [MonitorScheduler.Evaluation] {
        actions.compactMap { if case .evaluate(let evaluation) = $0 { evaluation } else { nil } }
    }

    /// The race users met: after a wake that changed nothing, the standby uplink's verdict came
    /// before the primary's, and took the `resumed` meant for the check's event. Now the standby
    /// event keeps its own reason and the check's event carries `resumed`.
    @Test func standbyVerdictBeforeTheCheckLeavesResumedToTheCheck() throws {
        var machine = MonitorMachine()
        machine.beginPrimaryCheck()
        machine.beginStandbyChecks()
        machine.endCheck(at: 0, result: .full)
        machine.endCheck(at: 0, result: .full)
        machine.sleep()
        machine.advance(60)
        machine.wake()
        machine.beginPrimaryCheck()
        machine.beginStandbyChecks()
        let before = machine.recorded.count
        // The standby's check answers first.
        let standby = try #require(machine.checks.firstIndex { $0.index != nil })
        machine.endCheck(at: standby, result: .full)
        machine.endCheck(at: 0, result: .full)
        let reasons = machine.recorded.dropFirst(before).map(\.event.reason)
        #expect(reasons.map(\.code) == [.probeResult, .resumed])
        #expect(reasons.first?.interface == "eth1")
        #expect(machine.recorded.last?.event.current.connectivity == .full)
        #expect(machine.recorded.map(\.event.reason.code).filter { $0 == .sleeping }.count == 1)
    }

    /// A check that began before the sleep and ends after the wake says nothing: its verdict is
    /// dropped, the standby's too; while asleep no verdict counts at all.
    @Test func verdictsOfChecksBegunBeforeTheWakeAreDropped() {
        var machine = MonitorMachine()
        machine.beginPrimaryCheck()
        machine.beginStandbyChecks()
        machine.advance(1)
        machine.sleep()
        #expect(machine.core.verdict(Self.probe("asleep"), path: ProbePath(machine.status), began: nil, now: machine.now).isEmpty)
        machine.advance(30)
        machine.wake()
        let count = machine.recorded.count
        machine.endCheck(at: 0, result: .full)
        machine.endCheck(at: 0, result: .full)
        #expect(machine.recorded.count == count)
        #expect(machine.status.connectivity == .unknown && machine.status.probe == nil)
        #expect(machine.core.standbyVerdicts.isEmpty)
        // The check after the wake does count, and its event is the wake's.
        machine.beginPrimaryCheck()
        machine.endCheck(at: 0, result: .portal)
        #expect(machine.recorded.last?.event.reason.code == .resumed)
        #expect(machine.status.connectivity == .portal)
    }

    /// A wake that finds the links changed is that event's; the check's is then an ordinary verdict.
    @Test func aWakeThatChangesTheLinksCarriesResumedItself() {
        var machine = MonitorMachine()
        machine.beginPrimaryCheck()
        machine.endCheck(at: 0, result: .full)
        machine.sleep()
        // eth0 lost its carrier while asleep; no message was read in time.
        machine.kernelChanged(.link(MonitorMachine.link(MonitorMachine.eth0, carrier: false)), lostToOverrun: true)
        machine.wake()
        #expect(machine.recorded.last?.event.reason.code == .resumed)
        #expect(machine.status.primary?.name == "eth1")
        machine.beginPrimaryCheck()
        machine.endCheck(at: 0, result: .full)
        #expect(machine.recorded.last?.event.reason.code == .probeResult)
        #expect(machine.recorded.filter { $0.event.reason.code == .resumed }.count == 1)
    }

    /// A change held by `Debounce=` goes out with the sleep's first classification, under its
    /// own reason; then the sleeping event drops the verdict of the path the status has then.
    @Test func sleepClassifiesWhatWaitsFirst() {
        var machine = MonitorMachine(debounce: 0.5)
        machine.beginPrimaryCheck()
        machine.endCheck(at: 0, result: .full)
        machine.kernelChanged(.link(MonitorMachine.link(MonitorMachine.eth0, carrier: false)), lostToOverrun: false)
        #expect(machine.timers[.debounce] != nil)
        let count = machine.recorded.count
        machine.sleep()
        let events = machine.recorded.dropFirst(count).map(\.event)
        #expect(events.map(\.reason.code) == [.carrierLost, .sleeping])
        #expect(events.last?.current.primary?.name == "eth1")
        #expect(events.last?.current.connectivity == .unknown && events.last?.current.probe == nil)
        // Nothing waits for a timer; only the measured quality's ageing (stale, unknown) stays armed.
        #expect(machine.timers.keys.filter { $0 != .quality }.isEmpty)
        #expect(machine.timers[.quality] == machine.core.armed[.quality])
    }

    /// An overrun: re-read the kernel, then classify with `resync`; under `Debounce=` the re-read
    /// waits for the timer, and a verdict meanwhile classifies at once, with `resync` (it takes
    /// the re-read too).
    @Test func overrunRereadsThenResyncs() throws {
        var scheduler = MonitorScheduler(configuration: .init(debounce: 0.2))
        let now = Self.t0
        _ = scheduler.start(observed: false, now: now)
        var changes = MonitorScheduler.KernelChanges()
        changes.overrun = true
        changes.other = true
        #expect(scheduler.kernelChanged(changes, nextExpiry: nil, now: now) == [.rereadKernel(.overrun)])
        #expect(Self.armed(scheduler.kernelReread(succeeded: true, nextExpiry: nil, now: now)) == [.debounce])
        #expect(scheduler.armed[.debounce] == now.uptime + 0.2)
        let actions = scheduler.verdict(Self.probe("a"), path: nil, began: nil, now: now.adding(0.1))
        #expect(actions.first == .cancel(.debounce))
        let evaluation = try #require(Self.evaluations(actions).first)
        #expect(evaluation.reason?.code == .resync && evaluation.whole && evaluation.verdict)
        #expect(scheduler.armed.isEmpty)
        // The timer of the debounce, fired late, does nothing.
        #expect(scheduler.timerFired(.debounce, now: now.adding(0.3)).isEmpty)
        // A failed re-read is no resync.
        #expect(scheduler.kernelChanged(changes, nextExpiry: nil, now: now) == [.rereadKernel(.overrun)])
        _ = scheduler.kernelReread(succeeded: false, nextExpiry: nil, now: now)
        let fired = scheduler.timerFired(.debounce, now: now.adding(0.2))
        #expect(Self.evaluations(fired).first?.reason == nil)
        #expect(Self.evaluations(fired).first?.whole == false)
    }

    /// A link's cost guess changed (its lease): that link alone is classified at once, its
    /// addresses kept (touched, not contents), with the lease's reason; a netlink change waiting
    /// for `Debounce=` goes with it under that reason, and a stronger pending reason wins.
    @Test func costChangeClassifiesTheLinkAtOnce() throws {
        var scheduler = MonitorScheduler(configuration: .init(debounce: 0.2))
        let now = Self.t0
        _ = scheduler.start(observed: false, now: now)
        let lease = Reason(code: .costChanged, interface: "wlan0", detail: "DHCP lease asks for metered use (ANDROID_METERED)")
        let first = try #require(Self.evaluations(scheduler.linkCostChanged(index: 3, reason: lease, now: now)).first)
        #expect(first.touched == [3] && first.contents.isEmpty && !first.whole && first.reason == lease)

        var changes = MonitorScheduler.KernelChanges()
        changes.touched = [2]; changes.contents = [2]; changes.other = true
        #expect(Self.armed(scheduler.kernelChanged(changes, nextExpiry: nil, now: now)) == [.debounce])
        let actions = scheduler.linkCostChanged(index: 3, reason: lease, now: now.adding(0.1))
        #expect(actions.first == .cancel(.debounce))
        let both = try #require(Self.evaluations(actions).first)
        #expect(both.touched == [2, 3] && both.contents == [2] && both.reason == lease)

        // An overrun's re-read waiting for the debounce: its resync is the stronger reason.
        changes.overrun = true
        #expect(scheduler.kernelChanged(changes, nextExpiry: nil, now: now) == [.rereadKernel(.overrun)])
        #expect(Self.armed(scheduler.kernelReread(succeeded: true, nextExpiry: nil, now: now)) == [.debounce])
        let stronger = try #require(Self.evaluations(scheduler.linkCostChanged(index: 3, reason: lease, now: now)).first)
        #expect(stronger.whole && stronger.reason?.detail == "netlink socket overrun; state re-read from the kernel")
    }

    /// Router announcements alone: the first at once, the next within the window held for the
    /// merge timer, which classifies them; their lifetimes arm the expiry timer a little after
    /// the deadline.
    @Test func announcementsAreMergedAndExpire() {
        var scheduler = MonitorScheduler()
        let now = Self.t0
        _ = scheduler.start(observed: false, now: now)
        var changes = MonitorScheduler.KernelChanges()
        changes.announced = [2]
        changes.touched = [2]
        let first = scheduler.kernelChanged(changes, nextExpiry: now.uptime + 600, now: now)
        #expect(Self.armed(first) == [.expiry])
        #expect(scheduler.armed[.expiry] == now.uptime + 600 + MonitorScheduler.expirySlack)
        #expect(Self.evaluations(first).count == 1)
        let second = scheduler.kernelChanged(changes, nextExpiry: now.uptime + 600, now: now.adding(0.25))
        #expect(Self.armed(second) == [.announcements] && Self.evaluations(second).isEmpty)
        #expect(scheduler.armed[.announcements] == now.uptime + 1 + MonitorScheduler.announcementSlack)
        #expect(Self.evaluations(scheduler.timerFired(.announcements, now: now.adding(1.001))).first?.touched == [2])
        #expect(scheduler.timerFired(.expiry, now: now.adding(600.005)) == [.expireAnnouncements])
        #expect(scheduler.announcementsExpired(touched: [], contents: [], nextExpiry: nil, now: now.adding(600.005)).isEmpty)
        // A link change is never held.
        var link = MonitorScheduler.KernelChanges()
        link.touched = [2]
        link.other = true
        #expect(Self.evaluations(scheduler.kernelChanged(link, nextExpiry: nil, now: now.adding(600.1))).count == 1)
    }

    /// The first start nobody watched is the initial state, no event; a restart is `resync`.
    @Test func startAndRestart() {
        var scheduler = MonitorScheduler()
        #expect(scheduler.start(observed: false, now: Self.t0) == [.initialize])
        #expect(scheduler.stop().isEmpty)
        #expect(Self.evaluations(scheduler.start(observed: false, now: Self.t0)).first?.reason?.code == .resync)
        var watched = MonitorScheduler()
        #expect(Self.evaluations(watched.start(observed: true, now: Self.t0)).first?.whole == true)
        // Stopped, a wake re-reads nothing.
        _ = watched.stop()
        #expect(watched.wake(awaitingCheck: true, now: Self.t0).isEmpty)
    }
}
