import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// A machine as the monitor sees it, driving the real `MonitorCore` with the inputs
/// `ReachabilityMonitor` hands it and performing only the core's outward actions (the timers on
/// a clock of its own, the dump the core asks for fed back as a new input): two uplinks, eth0
/// (metric 100, the primary while it has carrier) and eth1 (metric 200, a standby), a checker
/// whose checks begin and end when the test says (with their RTTs), logind's sleep and wake,
/// overruns, router advertisements, modems, reloads, passive quality dumps, leases' and
/// NetworkManager's metered hints. Every event is recorded with the input that caused it.
struct MonitorMachine {
    /// The input being fed when an event came out.
    enum Input: Equatable {
        case kernel, overrun, timer, modems, reload, sleep, wake, quality, cost, wifi
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
        /// A debounce or merge timer held changes when the input came (their reasons may win).
        var held: Bool
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
    /// What the kernel holds; the core's table is the monitor's picture of it.
    var kernel = KernelStateTable()
    var core: MonitorCore
    var timers: [MonitorCore.Timer: TimeInterval] = [:]
    /// The cost flips' held seconds (`.armCostFlip`), by link index.
    var costTimers: [Int: TimeInterval] = [:]
    var recorded: [Recorded] = []
    /// Statuses published quietly (figures moved without an event).
    var quiet: [Status] = []
    /// Dumps the core asked for.
    var rereads = 0
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
    private var held = false
    private var nextCheck = 1
    private var lastDump: TimeInterval?

    static let eth0 = 2, eth1 = 3

    static func configuration(debounce: TimeInterval) -> MonitorCore.Configuration {
        var configuration = MonitorCore.Configuration()
        configuration.monitor.debounceMilliseconds = Int((debounce * 1000).rounded())
        return configuration
    }

    init(debounce: TimeInterval = 0) {
        core = MonitorCore(configuration: Self.configuration(debounce: debounce), now: now)
        for change in Self.uplinks { kernel.apply(change) }
        perform(core.start(table: kernel, kindFacts: [:], observed: false, now: now))
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

    /// A core started on `uplinks` at `now` (eth0 primary, eth1 up; sysfs says nothing: ethernet).
    static func startedCore(now: ClockReading) -> MonitorCore {
        var core = MonitorCore(now: now)
        var table = KernelStateTable()
        for change in uplinks { table.apply(change) }
        _ = core.start(table: table, kindFacts: [:], observed: false, now: now)
        return core
    }

    /// The events among a core's actions.
    static func events(_ actions: [MonitorCore.Action]) -> [ReachabilityEvent] {
        actions.compactMap { if case .emit(let event, _) = $0 { event } else { nil } }
    }

    static func link(_ index: Int, carrier: Bool) -> LinkFacts {
        LinkFacts(index: index, name: index == eth0 ? "eth0" : "eth1", up: true, carrier: carrier,
                  operstate: carrier ? "up" : "lowerlayerdown")
    }

    var status: Status { core.status }
    var tracker: StatusTracker { core.tracker }
    var table: KernelStateTable { core.table }

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
        begin(lost ? .overrun : .kernel)
        var read = MonitorCore.Read(now: now)
        for message in messages { core.received(message, kindFacts: nil, into: &read) }
        if lost { read.overran() }
        lost = false
        perform(core.readEnded(read))
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

    /// The check at `position` ends with `result` after a round trip of `rttMs`; its verdict
    /// goes to the monitor.
    mutating func endCheck(at position: Int, result: Connectivity, rttMs: Double? = nil) {
        let check = checks.remove(at: position)
        let probe = Probe(url: check.url, result: result, httpStatus: result == .full ? 204 : nil,
                          rttMs: result == .full ? rttMs : nil, checkedAt: now.wall)
        began[check.url] = check.began
        if let index = check.index {
            begin(.standbyVerdict, note: "\(check.url) began \(check.began)")
            perform(core.standbyVerdict(probe, index: index, began: check.began, now: now))
        } else {
            begin(.verdict(afterWake: wakeTimes.last.map { check.began >= $0 } ?? true), note: "\(check.url) began \(check.began)")
            perform(core.verdict(probe, path: check.path, began: check.began, now: now))
        }
    }

    /// After a failover the checker shows the new primary's standby verdict (as `setProbe`).
    mutating func publishFailoverVerdict() {
        guard let path = ProbePath(status), let known = core.standbyVerdicts[path.index],
              let knownBegan = began[known.url] else { return }
        begin(.verdict(afterWake: wakeTimes.last.map { knownBegan >= $0 } ?? true), note: "failover: \(known.url) began \(knownBegan)")
        perform(core.verdict(known, path: path, began: knownBegan, now: now))
    }

    mutating func sleep() {
        sleeps += 1
        asleep = true
        begin(.sleep)
        perform(core.sleep(now: now))
    }

    mutating func wake() {
        wakes += 1
        asleep = false
        wakeTimes.append(now.uptime)
        begin(.wake)
        perform(core.wake(awaitingCheck: true, now: now))
    }

    mutating func modems(_ modems: [ModemState]) {
        begin(.modems)
        perform(core.modemsChanged(modems, now: now))
    }

    mutating func wifi(_ devices: [WiFiDevice]) {
        begin(.wifi)
        perform(core.wifiChanged(devices, now: now))
    }

    mutating func reload(debounce: TimeInterval) {
        begin(.reload)
        perform(core.reconfigured(Self.configuration(debounce: debounce), kindFacts: [:], now: now))
    }

    /// One passive dump of the apps' sockets: `sockets` that moved data over `index` with this RTT
    /// (none: an idle dump), and what their segments did for the data-stall detector.
    mutating func measured(index: Int, rttMs: Double, sockets: Int, stall: StallTally? = nil) {
        let samples = (0..<sockets).map { _ in
            QualitySample(interfaceIndex: index, source: .passive, rttMs: rttMs, minRttMs: rttMs * 0.8, segmentsSent: 200,
                          segmentsRetransmitted: 0, bytesReceived: 10_000)
        }
        let dump = QualityDump(uptime: now.uptime, interval: lastDump.map { now.uptime - $0 },
                               samples: sockets == 0 ? [:] : [index: samples], stalls: stall.map { [index: $0] } ?? [:])
        lastDump = now.uptime
        begin(.quality)
        perform(core.qualityMeasured(dump, now: now))
    }

    /// What link `index`'s DHCP lease says about its cost.
    mutating func lease(metered: Bool, index: Int) {
        begin(.cost)
        perform(core.leaseMetered(metered, index: index, now: now))
    }

    /// The interfaces NetworkManager calls metered.
    mutating func networkManagerMetered(_ names: [String]) {
        begin(.cost)
        perform(core.networkManagerMetered(names, now: now))
    }

    /// Time passes; the timers due fire in the order of their deadlines.
    mutating func advance(_ seconds: TimeInterval) {
        let end = now.uptime + seconds
        while true {
            let due = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value })
            let flip = costTimers.filter({ $0.value <= end }).min(by: { $0.value < $1.value })
            if let flip, due.map({ flip.value < $0.value }) ?? true {
                now = now.adding(max(flip.value - now.uptime, 0))
                costTimers[flip.key] = nil
                begin(.cost)
                perform(core.costFlipIntervalEnded(index: flip.key, now: now))
                continue
            }
            guard let due else { break }
            now = now.adding(max(due.value - now.uptime, 0))
            timers[due.key] = nil
            begin(.timer)
            perform(core.timerFired(due.key, now: now))
        }
        now = now.adding(end - now.uptime)
    }

    private mutating func begin(_ input: Input, note: String = "") {
        self.input = input
        self.note = note
        held = timers[.debounce] != nil || timers[.announcements] != nil
    }

    private mutating func makeURL() -> String {
        defer { nextCheck += 1 }
        return "http://check.test/\(nextCheck)"
    }

    // MARK: Performing the core's actions, as the monitor does

    /// One flat loop: the dump the core asks for is a new input after the actions before it.
    mutating func perform(_ actions: [MonitorCore.Action]) {
        var next = actions
        while !next.isEmpty {
            var more: [MonitorCore.Action] = []
            for action in next {
                switch action {
                case .emit(let event, _):
                    recorded.append(Recorded(event: event, input: input, sleeps: sleeps, wakes: wakes, held: held, note: note))
                case .quiet(let status):
                    quiet.append(status)
                case .arm(let timer, let after):
                    timers[timer] = now.uptime + after
                case .cancel(let timer):
                    timers[timer] = nil
                case .rereadKernel:
                    rereads += 1
                    more += core.kernelDumped(kernel, kindFacts: [:], now: now)
                case .armCostFlip(let index, let after):
                    costTimers[index] = now.uptime + after
                case .publish, .refreshLeases, .forgetLease, .routingChanged, .log, .recheck:
                    break
                }
            }
            next = more
        }
    }
}

/// Random interleavings of what the monitor hears around sleep and wake: the checker's verdicts
/// (some from checks that began before a sleep and end after it, with their RTTs), standby
/// verdicts, failovers, overruns, router advertisements, modems, reloads, passive quality dumps,
/// leases' and NetworkManager's cost hints, and timers; then the promises of the monitor's
/// events checked over the whole run.
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
                                 result: pick([.full, .full, .limited, .portal]), rttMs: pick([nil, 30, 90, 500, 3000]))
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
            case 79..<86:
                // The apps' sockets on an uplink: fast, slow, very slow, or idle.
                // Their segments: answered, unanswered (a stall), or not told.
                machine.measured(index: pick([MonitorMachine.eth0, MonitorMachine.eth1]), rttMs: pick([20, 40, 300, 1500, 2500]),
                                 sockets: pick([0, 1, 3]),
                                 stall: pick([nil, StallTally(sent: 30, received: 20, retransmitted: 1),
                                              StallTally(sent: 12, received: 0, retransmitted: 12)]))
            case 86..<89:
                if chance(50) {
                    machine.lease(metered: chance(50), index: pick([MonitorMachine.eth0, MonitorMachine.eth1]))
                } else {
                    machine.networkManagerMetered(pick([[], ["eth0"], ["eth1"], ["eth0", "eth1"]]))
                }
            case 89..<93:
                // A Wi-Fi owner on either uplink: another network, access point or signal, none, or idle.
                let name = pick(["eth0", "eth1"])
                let station = WiFiStation(owner: pick([.iwd, .networkManager]), ssid: WiFiSSID(pick(["cafe", "home"])),
                                          bssid: WiFiBSSID(pick(["02:00:00:00:00:01", "02:00:00:00:00:02"])),
                                          frequencyMHz: 5180, signalDbm: pick([-50, -52, -70, -86, -95]))
                machine.wifi(pick([[], [WiFiDevice(interface: name, owner: .wpaSupplicant, state: .disconnected)],
                                   [WiFiDevice(interface: name, owner: station.owner, state: .connected, station: station)]]))
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
    /// verdicts of checks that began after it; and the picture the core keeps by deltas (a
    /// link's slice, the verdicts, the quality figures, the cost) is the one it would build whole.
    private static func check(_ machine: MonitorMachine) {
        if machine.timers[.debounce] == nil, machine.timers[.announcements] == nil {
            let core = machine.core
            var whole = IndexedSnapshot(core.scheduler.reported.snapshot(of: core.table, verdict: core.verdictLookup()))
            // The figures ride along with the next classification; the rest must be the same.
            whole.linkQualities = core.tracker.indexed.linkQualities
            // An advertisement that only refreshes a lifetime changes nothing shown, so the slice
            // keeps the older deadline; all else must be the same.
            let kept = core.tracker.indexed
            let drift = Set(kept.slices.keys).union(whole.slices.keys).sorted().compactMap { index -> String? in
                let a = kept.slices[index], b = whole.slices[index]
                let announced = { (slice: LinkSlice?) in
                    slice?.announcements.map { [$0.dnsServers, $0.searchDomains, [$0.nat64Prefix ?? "-", $0.captivePortal ?? "-"]] }
                }
                guard a?.link != b?.link || a?.addresses != b?.addresses || a?.routes != b?.routes
                        || announced(a) != announced(b) else { return nil }
                return "\(index): \(String(describing: a?.link)) vs \(String(describing: b?.link)), "
                    + "announced \(String(describing: announced(a))) vs \(String(describing: announced(b)))"
            }
            #expect(drift.isEmpty, "deltas drifted from the whole picture: \(drift) \(trace(machine))")
            #expect(kept.linkIndexes == whole.linkIndexes && kept.modems == whole.modems && kept.rules == whole.rules
                        && kept.probe == whole.probe && kept.probePath == whole.probePath
                        && kept.standbyVerdicts == whole.standbyVerdicts && kept.linkQualities == whole.linkQualities
                        && kept.measuresQuality == whole.measuresQuality && kept.dataStalls == whole.dataStalls
                        && kept.wifi == whole.wifi,
                    "deltas drifted from the whole picture: \(trace(machine))")
        }
        if machine.asleep, let stalled = machine.status.interfaces.first(where: { $0.stall != nil }) {
            Issue.record("\(stalled.name)'s stall shown while asleep: \(trace(machine))")
        }
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

        // The Wi-Fi owners' reports are among the inputs that make events (seed 0 has some).
        if seed == 0 { #expect(recorded.contains { $0.input == .wifi }) }

        // A dump or a cost hint is its own event, unless changes held for a timer go with it:
        // a dump only moves the quality shown or an uplink's stall (never connectivity: only a
        // check's verdict does), a hint only the cost.
        for record in recorded where !record.held {
            switch record.input {
            case .quality:
                let stall = record.event.reason.code == .dataStall
                #expect(record.event.reason.code == .qualityChanged || stall, "\(record.event.reason)")
                #expect(Set(record.event.changes).isSubset(of: stall ? ["linkQuality", "interfaces", "primary", "vpn"] : ["linkQuality", "interfaces"]),
                        "\(record.event.changes)")
                #expect(record.event.previous?.connectivity == record.event.current.connectivity)
            case .cost:
                #expect(record.event.reason.code == .costChanged, "\(record.event.reason)")
            case .wifi:
                // Its own reason, or the quality's when the bars moved a class.
                #expect([.roamed, .wifiSignalChanged, .wifiChanged, .qualityChanged].contains(record.event.reason.code),
                        "\(record.event.reason) \(record.event.changes)")
            case .kernel, .overrun, .timer, .modems, .reload, .sleep, .wake, .verdict, .standbyVerdict:
                break
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
