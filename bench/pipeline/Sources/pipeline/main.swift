// What one carrier change costs reachd between the netlink message and the bytes of its event,
// done in a loop outside the daemon: the message applied to the state table, the link's slice,
// the tracker (classification, changes, reason, event), and the event's JSON. Four times: back
// to back (everything in the caches); with a 3 ms sleep before each change, as an idle daemon
// meets a change (the CPU went idle; caches, TLBs and branch predictors went cold); with 3 ms
// of spinning instead (the CPU stays busy with almost nothing: no idle, little eviction); and
// with 3 ms of walking 8 MiB of other memory (busy, and the caches evicted). Where the sleep
// lands between the last two says whether idle itself or the eviction costs the time. Once
// more after the walk and after a sleep, with the same change made first on a second, separate
// copy of the state: the code is then warm and the measured copy's data still cold, which says
// how much of the cold cost is the code and how much the values.
//
//   pipeline [CHANGES]        (default 20000 back to back, 400 after each kind of pause)
import Dispatch
import FoundationEssentials
import Glibc
import ReachabilityCore

struct Stages {
    let names = ["table + slice", "tracker", "event JSON"]
    var samples: [[UInt64]] = [[], [], []]

    func report(_ title: String) {
        var line = "\(title):"
        for (name, values) in zip(names, samples) {
            let sorted = values.sorted()
            line += " \(name) \(Self.microseconds(sorted[sorted.count / 2])) (\(Self.microseconds(sorted[sorted.count * 9 / 10]))),"
        }
        let totals = (0..<samples[0].count).map { i in samples.reduce(0) { $0 + $1[i] } }.sorted()
        print(line + " all three \(Self.microseconds(totals[totals.count / 2])) (\(Self.microseconds(totals[totals.count * 9 / 10]))).")
    }

    static func microseconds(_ nanoseconds: UInt64) -> String {
        "\(nanoseconds / 1000).\(nanoseconds % 1000 / 100) µs"
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// lo and an Ethernet uplink `rb0` with IPv4 and IPv6 addresses and a default route, as the
/// benchmark's namespace has them.
func makeTable() -> (KernelStateTable, LinkFacts) {
    var table = KernelStateTable()
    var touched = Set<Int>(), contents = Set<Int>()
    let uplink = LinkFacts(index: 10, name: "rb0", rtnlKind: "veth", up: true, carrier: true, operstate: "up")
    let changes: [KernelChange] = [
        .link(LinkFacts(index: 1, name: "lo", up: true, carrier: true, loopback: true, operstate: "unknown")),
        .link(uplink),
        .addressAdded(AddressState(ifindex: 1, family: .ipv4, address: "127.0.0.1", prefixLength: 8, scope: .host)),
        .addressAdded(AddressState(ifindex: 10, family: .ipv4, address: "10.200.0.2", prefixLength: 24, scope: .global)),
        .addressAdded(AddressState(ifindex: 10, family: .ipv6, address: "fd00:200::2", prefixLength: 64, scope: .global)),
        .routeAdded(RouteState(family: .ipv4, destination: nil, prefixLength: 0, gateway: "10.200.0.1", oif: 10, metric: 0), replace: false),
        .routeAdded(RouteState(family: .ipv4, destination: "10.200.0.0", prefixLength: 24, gateway: nil, oif: 10, metric: 0), replace: false),
    ]
    for change in changes { table.apply(change, touching: &touched, contents: &contents) }
    return (table, uplink)
}

/// What happens for 3 ms before each change.
enum Pause {
    case none, sleep, spin, evict

    static let microseconds: UInt64 = 3_000
    /// Larger than the L2 and most of an L3 share on the machines this runs on.
    static let evictionBytes = 8 << 20

    /// Returns a byte of `other` so that its walk is not optimised away.
    func wait(_ other: inout [UInt8]) -> UInt8 {
        let end = now() + Self.microseconds * 1000
        switch self {
        case .none: return 0
        case .sleep: usleep(UInt32(Self.microseconds)); return 0
        case .spin: while now() < end {}; return 0
        case .evict:
            while now() < end {
                for offset in stride(from: 0, to: other.count, by: 64) { other[offset] &+= 1 }
            }
            return other[0]
        }
    }
}

/// One copy of the state a carrier change goes through: the table, the tracker, the previous status's JSON.
struct EventPath {
    let kinds: [Int: InterfaceKind] = [1: .loopback, 10: .ethernet]
    var table: KernelStateTable
    var uplink: LinkFacts
    var tracker: StatusTracker
    var previousJSON: [UInt8]
    var touched = Set<Int>(), contents = Set<Int>()
    var bytes = 0

    init() {
        (table, uplink) = makeTable()
        tracker = StatusTracker(snapshot: table.snapshot(kinds: kinds), firstSequence: 1, now: Date())
        previousJSON = WireJSONWriter.json(tracker.status)
    }

    /// Change `number` (the carrier goes off and on in turn); returns the three stages' times.
    mutating func change(_ number: Int) -> [UInt64] {
        uplink.carrier = number % 2 == 1
        touched.removeAll(keepingCapacity: true)
        contents.removeAll(keepingCapacity: true)
        let t0 = now()
        table.apply(.link(uplink), touching: &touched, contents: &contents)
        let slices = touched.map { index in
            table.slice(at: index, kind: kinds[index] ?? .other, metered: false, ignored: false,
                        previous: contents.contains(index) ? nil : tracker.indexed.slices[index])
        }
        let t1 = now()
        let action = tracker.update(slices: slices, now: Date())
        let t2 = now()
        guard case .emit(let event) = action else { fatalError("change \(number) made no event") }
        let currentJSON = WireJSONWriter.json(event.current)
        var writer = WireJSONWriter(capacity: 64 + previousJSON.count + 2 * currentJSON.count)
        writer.raw(#"{"continues":true,"parameters":{"event":"#)
        writer.write(event, previousJSON: previousJSON, currentJSON: currentJSON)
        writer.raw("}}\0")
        let t3 = now()
        previousJSON = currentJSON
        bytes += writer.bytes.count
        return [t1 - t0, t2 - t1, t3 - t2]
    }
}

/// `changes` changes with `pause` before each; with `warmCode`, the same change is made on a
/// second copy of the state right before the measured one.
func run(changes: Int, pause: Pause, warmCode: Bool = false) -> Stages {
    var other = pause == .evict ? [UInt8](repeating: 0, count: Pause.evictionBytes) : []
    var walked = 0
    var measured = EventPath(), warmer = EventPath()
    var stages = Stages()
    for number in 0..<changes {
        walked &+= Int(pause.wait(&other))
        if warmCode { _ = warmer.change(number) }
        for (stage, time) in measured.change(number).enumerated() { stages.samples[stage].append(time) }
    }
    precondition(measured.bytes > 0 && walked >= 0 && warmer.bytes >= 0)
    return stages
}

let count = CommandLine.arguments.dropFirst().first.flatMap { Int($0) }
run(changes: count ?? 20_000, pause: .none).report("back to back")
let paused = min(count ?? 400, 2_000)
run(changes: paused, pause: .sleep).report("after a 3 ms sleep")
run(changes: paused, pause: .spin).report("after 3 ms of spinning")
run(changes: paused, pause: .evict).report("after 3 ms of walking 8 MiB")
run(changes: paused, pause: .evict, warmCode: true).report("after walking 8 MiB, the code warmed on another copy")
run(changes: paused, pause: .sleep, warmCode: true).report("after a sleep, the code warmed on another copy")
