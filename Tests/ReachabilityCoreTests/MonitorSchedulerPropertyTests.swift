import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// A machine as the monitor sees it, driven through `MonitorScheduler` the way
/// `ReachabilityMonitor` drives it (the same table, the same tracker update, the scheduler's
/// actions performed in order), with a clock of its own: two uplinks, eth0 (metric 100, the
/// primary while it has carrier) and eth1 (metric 200, a standby), a checker whose checks begin
/// and end when the test says, logind's sleep and wake, overruns, router advertisements, modems,
/// reloads. Every event is recorded with the input that caused it.
struct MonitorMachine {
    /// The input being fed when an event came out.
    enum Input: Equatable {
        case kernel, overrun, timer, modems, reload, sleep, wake
        /// The primary's verdict, from a check that began after the last wake (or before any).
        case verdict(afterWake: Bool)
        case standbyVerdict
    }

    struct Recorded {
        var event: ReachabilityEvent
        var input: Input
        /// Sleeps and wakes fed before it.
        var sleeps: Int
        var wakes: Int
        /// The verdict's check, when a verdict caused it.
        var note = ""
    }

    /// A check under way: of the primary (nil index) or of a standby uplink.
    struct Check {
        var url: String
        var index: Int?
        var path: ProbePath
        var began: TimeInterval
    }

    var now = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 1000)
    /// What the kernel holds; `table` is the monitor's picture of it.
    var kernel = KernelStateTable()
    var table = KernelStateTable()
    var scheduler: MonitorScheduler
    var tracker = StatusTracker(now: Date(timeIntervalSince1970: 1_800_000_000))
    var timers: [MonitorScheduler.Timer: TimeInterval] = [:]
    var recorded: [Recorded] = []
    var checks: [Check] = []
    /// When the check behind each verdict began, by the verdict's URL.
    var began: [String: TimeInterval] = [:]
    var sleeps = 0, wakes = 0
    var asleep = false
    /// Uptime of each wake.
    var wakeTimes: [TimeInterval] = []
    /// Kernel changes the socket lost: the next read reports an overrun.
    var lost = false
    private var input = Input.kernel
    private var note = ""
    private var nextCheck = 1

    static let eth0 = 2, eth1 = 3

    static func verdict(_ facts: LinkFacts) -> LinkVerdict {
        LinkVerdict(name: facts.name, kind: facts.loopback ? .loopback : .ethernet, metered: false, ignored: false)
    }

    init(debounce: TimeInterval = 0) {
        scheduler = MonitorScheduler(configuration: .init(debounce: debounce))
        for change in Self.uplinks { kernel.apply(change) }
        table = kernel
        perform(scheduler.start(observed: false, now: now))
    }

    /// lo, and two uplinks with an address and a default route each.
    static let uplinks: [KernelChange] = [
        .link(LinkFacts(index: 1, name: "lo", arpType: 772, up: true, carrier: true, loopback: true, operstate: "unknown")),
        .link(link(eth0, carrier: true)), .link(link(eth1, carrier: true)),
        .addressAdded(AddressState(ifindex: eth0, family: .ipv4, address: "10.0.0.2", prefixLength: 24)),
        .addressAdded(AddressState(ifindex: eth1, family: .ipv4, address: "10.1.0.2", prefixLength: 24)),
        .routeAdded(RouteState(family: .ipv4, gateway: "10.0.0.1", oif: eth0, metric: 100), replace: false),
        .routeAdded(RouteState(family: .ipv4, gateway: "10.1.0.1", oif: eth1, metric: 200), replace: false),
    ]

    static func link(_ index: Int, carrier: Bool) -> LinkFacts {
        LinkFacts(index: index, name: index == eth0 ? "eth0" : "eth1", up: true, carrier: carrier,
                  operstate: carrier ? "up" : "lowerlayerdown")
    }

    var status: Status { tracker.status }

    // MARK: Inputs

    /// The kernel changes; the message reaches the monitor unless the socket overran.
    mutating func kernelChanged(_ change: KernelChange, lostToOverrun: Bool) {
        if case .routerOption = change {} else { kernel.apply(change) }
        if lostToOverrun {
            lost = true
            return
        }
        read([change])
    }

    /// One read of the socket: `messages`, and the overrun if messages were lost.
    mutating func read(_ messages: [KernelChange]) {
        input = lost ? .overrun : .kernel
        note = ""
        var changes = MonitorScheduler.KernelChanges()
        changes.readStarted = now.uptime
        for message in messages { changes.apply(message, to: &table, receivedAt: now.uptime) }
        changes.overrun = lost
        lost = false
        perform(scheduler.kernelChanged(changes, nextExpiry: table.nextAnnouncementDeadline, now: now))
    }

    /// The checker begins a check of the primary's path (it does so after a wake, after a
    /// change of path, on its timer).
    mutating func beginPrimaryCheck() {
        guard let path = ProbePath(status) else { return }
        checks.append(Check(url: makeURL(), index: nil, path: path, began: now.uptime))
    }

    /// The checker begins a check of each standby uplink.
    mutating func beginStandbyChecks() {
        for uplink in StandbyUplink.all(in: tracker.indexed, status: status) {
            checks.append(Check(url: makeURL(), index: uplink.path.index, path: uplink.path, began: now.uptime))
        }
    }

    /// The check at `position` ends with `result`; its verdict goes to the monitor.
    mutating func endCheck(at position: Int, result: Connectivity) {
        let check = checks.remove(at: position)
        let probe = Probe(url: check.url, result: result, httpStatus: result == .full ? 204 : nil, checkedAt: now.wall)
        began[check.url] = check.began
        note = "\(check.url) began \(check.began)"
        if let index = check.index {
            input = .standbyVerdict
            perform(scheduler.standbyVerdict(probe, index: index, interface: check.path.interface, began: check.began, now: now))
        } else {
            input = .verdict(afterWake: wakeTimes.last.map { check.began >= $0 } ?? true)
            perform(scheduler.verdict(probe, path: check.path, began: check.began, now: now))
        }
    }

    /// After a failover the checker shows the new primary's standby verdict (as `setProbe`).
    mutating func publishFailoverVerdict() {
        guard let path = ProbePath(status), let known = scheduler.standbyVerdicts[path.index],
              let knownBegan = began[known.url] else { return }
        input = .verdict(afterWake: wakeTimes.last.map { knownBegan >= $0 } ?? true)
        note = "failover: \(known.url) began \(knownBegan)"
        perform(scheduler.verdict(known, path: path, began: knownBegan, now: now))
    }

    mutating func sleep() {
        sleeps += 1
        asleep = true
        input = .sleep
        note = ""
        perform(scheduler.sleep(now: now))
    }

    mutating func wake() {
        wakes += 1
        asleep = false
        wakeTimes.append(now.uptime)
        input = .wake
        note = ""
        perform(scheduler.wake(awaitingCheck: true, now: now))
    }

    mutating func modems(_ modems: [ModemState]) {
        input = .modems
        note = ""
        perform(scheduler.modemsChanged(modems, now: now))
    }

    mutating func reload(debounce: TimeInterval) {
        input = .reload
        note = ""
        perform(scheduler.reconfigured(.init(debounce: debounce), now: now))
    }

    /// Time passes; the timers due fire in the order of their deadlines.
    mutating func advance(_ seconds: TimeInterval) {
        let end = now.uptime + seconds
        while let due = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            now = now.adding(max(due.value - now.uptime, 0))
            timers[due.key] = nil
            input = .timer
            note = ""
        note = ""
            perform(scheduler.timerFired(due.key, now: now))
        }
        now = now.adding(end - now.uptime)
    }

    private mutating func makeURL() -> String {
        defer { nextCheck += 1 }
        return "http://check.test/\(nextCheck)"
    }

    // MARK: Performing the scheduler's actions, as the monitor does

    mutating func perform(_ actions: [MonitorScheduler.Action]) {
        for action in actions {
            switch action {
            case .evaluate(let evaluation):
                switch tracker.update(evaluation, table: table, reported: scheduler.reported, verdict: Self.verdict, now: now.wall) {
                case .none:
                    scheduler.evaluated(emitted: false)
                case .emit(let event):
                    scheduler.evaluated(emitted: true)
                    recorded.append(Recorded(event: event, input: input, sleeps: sleeps, wakes: wakes, note: note))
                }
            case .initialize:
                tracker = StatusTracker(snapshot: scheduler.reported.snapshot(of: table, verdict: Self.verdict), now: now.wall)
            case .arm(let timer, let after):
                timers[timer] = now.uptime + after
            case .cancel(let timer):
                timers[timer] = nil
            case .rereadKernel:
                var fresh = kernel
                fresh.adoptAnnouncements(from: table)
                table = fresh
                perform(scheduler.kernelReread(succeeded: true, nextExpiry: table.nextAnnouncementDeadline, now: now))
            case .dropVerdicts:
                perform(scheduler.dropVerdicts(path: ProbePath(status), now: now))
            case .expireAnnouncements:
                var ranOut: Set<Int> = [], contents: Set<Int> = []
                table.expireAnnouncements(now: now.uptime, touching: &ranOut, contents: &contents)
                perform(scheduler.announcementsExpired(touched: ranOut, contents: contents,
                                                       nextExpiry: table.nextAnnouncementDeadline, now: now))
            }
        }
    }
}

/// Random interleavings of what the monitor hears around sleep and wake: the checker's verdicts
/// (some from checks that began before a sleep and end after it), standby verdicts, failovers,
/// overruns, router advertisements, modems, reloads and timers; then the promises of the
/// monitor's events checked over the whole run.
@Suite struct MonitorSchedulerPropertyTests {
    private struct Driver {
        var rng: SplitMix64
        var machine: MonitorMachine

        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }

        /// One step: a random input.
        mutating func step() {
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<6:
                if machine.asleep {
                    machine.wake()
                    // The checker's resume: a fresh check of the primary at once, the standbys too.
                    machine.beginPrimaryCheck()
                    if chance(70) { machine.beginStandbyChecks() }
                } else {
                    machine.sleep()
                }
            case 6..<20:
                // Checks begin while awake (the checker is suspended while asleep).
                guard !machine.asleep else { return }
                if chance(50) { machine.beginPrimaryCheck() } else { machine.beginStandbyChecks() }
            case 20..<45:
                // A check ends; one begun before a sleep may still end after the wake.
                guard !machine.checks.isEmpty else { return }
                machine.endCheck(at: Int.random(in: 0..<machine.checks.count, using: &rng),
                                 result: pick([.full, .full, .limited, .portal]))
            case 45..<55:
                // A failover (or its end): eth0's carrier flips.
                let carrier = !(machine.kernel.links[MonitorMachine.eth0]?.carrier ?? true)
                machine.kernelChanged(.link(MonitorMachine.link(MonitorMachine.eth0, carrier: carrier)), lostToOverrun: chance(20))
                if chance(40) { machine.publishFailoverVerdict() }
            case 55..<60:
                let carrier = !(machine.kernel.links[MonitorMachine.eth1]?.carrier ?? true)
                machine.kernelChanged(.link(MonitorMachine.link(MonitorMachine.eth1, carrier: carrier)), lostToOverrun: chance(20))
            case 60..<66:
                // What was lost is noticed on the next read.
                machine.read([])
            case 66..<74:
                let option = RouterOption(ifindex: pick([MonitorMachine.eth0, MonitorMachine.eth1]),
                                          content: pick([.dnsServers(["2001:db8::53"]), .dnsServers(["2001:db8::54"]),
                                                         .searchDomains(["example.org"])]),
                                          lifetime: pick([2, 5, 600]))
                machine.kernelChanged(.routerOption(option), lostToOverrun: false)
            case 74..<77:
                machine.modems(chance(50) ? [] : [ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: ["wwan0"],
                                                             accessTechnologies: 1 << 14)])
            case 77..<79:
                machine.reload(debounce: pick([0, 0, 0.2]))
            default:
                machine.advance(pick([0.05, 0.3, 1, 3]))
            }
        }
    }

    private static func run(seed: Int, steps: Int, debounce: TimeInterval) -> MonitorMachine {
        var driver = Driver(rng: SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 11), machine: MonitorMachine(debounce: debounce))
        for _ in 0..<steps {
            driver.step()
            check(driver.machine)
        }
        // Whatever a timer holds goes out.
        driver.machine.advance(10)
        check(driver.machine)
        return driver.machine
    }

    /// What must hold after every step: during a sleep no verdict is shown, after a wake only
    /// verdicts of checks that began after it.
    private static func check(_ machine: MonitorMachine) {
        let shown = machine.tracker.indexed
        var probes = [shown.probe, machine.status.probe].compactMap { $0 } + Array(shown.standbyVerdicts.values)
        probes.removeAll { $0.result == .none }
        for probe in probes {
            if machine.asleep {
                Issue.record("verdict \(probe.url) shown while asleep: \(trace(machine))")
            } else if let wake = machine.wakeTimes.last, let began = machine.began[probe.url] {
                #expect(began >= wake, "verdict \(probe.url) of a check begun at \(began) shown after the wake at \(wake): \(trace(machine))")
            }
        }
    }

    /// The last events, for a failure's message.
    private static func trace(_ machine: MonitorMachine) -> String {
        machine.recorded.suffix(8).map { record in
            let current = record.event.current
            let standby = current.interfaces.compactMap { interface in interface.connectivity.map { "\(interface.name):\($0)" } }
            return "\(record.input) → \(record.event.reason.code) primary=\(current.primary?.name ?? "-") "
                + "probe=\(current.probe?.url ?? "-") standby=\(standby) (wakes \(record.wakes), sleeps \(record.sleeps)) \(record.note)"
        }.joined(separator: "; ")
    }

    @Test(arguments: 0..<60)
    func sleepWakeAndVerdictsInAnyOrder(seed: Int) {
        let machine = Self.run(seed: seed, steps: 250, debounce: seed % 3 == 0 ? 0.2 : 0)
        let recorded = machine.recorded

        // No event without a change, and each follows the one before.
        for (i, record) in recorded.enumerated() {
            if let previous = record.event.previous {
                #expect(record.event.current.differs(from: previous), "event \(record.event.sequence) changes nothing")
            }
            if i > 0 {
                #expect(record.event.sequence == recorded[i - 1].event.sequence + 1)
                #expect(record.event.previous.map { !$0.differs(from: recorded[i - 1].event.current) } == true)
            }
        }

        // `sleeping` only from a sleep, at most one per sleep; `resumed` only after a wake and
        // before the next sleep, at most one per wake.
        for record in recorded {
            switch record.event.reason.code {
            case .sleeping: #expect(record.input == .sleep)
            case .resumed: #expect(record.input == .wake || record.input == .verdict(afterWake: true))
            // A sleep first classifies what waits for a timer, with its own reason.
            default: #expect(record.input != .wake, "\(record.event.reason)")
            }
        }
        for sleep in 1...max(machine.sleeps, 1) where sleep <= machine.sleeps {
            #expect(recorded.filter { $0.event.reason.code == .sleeping && $0.sleeps == sleep }.count <= 1)
        }
        for wake in 1...max(machine.wakes, 1) where wake <= machine.wakes {
            // From the wake up to the next sleep.
            let window = recorded.filter { $0.wakes == wake && $0.sleeps == wake }
            let resumed = window.filter { $0.event.reason.code == .resumed }
            #expect(resumed.count <= 1, "wake \(wake): \(resumed.map(\.event.reason))")
            if let first = window.first, first.input == .wake {
                // The re-read changed the status: that event is the wake's.
                #expect(first.event.reason.code == .resumed)
            } else if let check = window.first(where: { $0.input == .verdict(afterWake: true) }) {
                // Otherwise the first event of a check begun after the wake carries it, whatever
                // came before it (standby verdicts, links, overruns, timers).
                #expect(check.event.reason.code == .resumed, "wake \(wake): \(window.map { ($0.input, $0.event.reason.code) })")
            } else {
                #expect(resumed.isEmpty)
            }
        }
        #expect(recorded.filter { $0.event.reason.code == .resumed && ($0.sleeps != $0.wakes || $0.wakes == 0) }.isEmpty)
    }

    /// Every sleep that had anything to drop says so in exactly one event, before anything else.
    @Test(arguments: 0..<30)
    func everySleepThatDropsAVerdictIsOneEvent(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 5)
        var machine = MonitorMachine()
        for _ in 0..<20 {
            machine.beginPrimaryCheck()
            machine.beginStandbyChecks()
            while !machine.checks.isEmpty {
                machine.endCheck(at: Int.random(in: 0..<machine.checks.count, using: &rng), result: .full)
            }
            let before = machine.status
            let hadVerdict = (before.reachable && before.probe != nil) || before.interfaces.contains { $0.connectivity != nil }
            let count = machine.recorded.count
            machine.sleep()
            let events = machine.recorded.dropFirst(count)
            #expect(events.count == (hadVerdict ? 1 : 0))
            #expect(events.allSatisfy { $0.event.reason.code == .sleeping && $0.event.current.connectivity != .full })
            #expect(machine.status.interfaces.allSatisfy { $0.connectivity == nil })
            machine.advance(Double(Int.random(in: 1...100, using: &rng)))
            machine.wake()
        }
    }
}
