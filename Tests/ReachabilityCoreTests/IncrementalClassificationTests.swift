import FoundationEssentials
import Testing
import TestSupport
@testable import ReachabilityCore

/// What the monitor decides per link name (sysfs kind, `Kind.`/`Metered=`/`Ignore=` globs), fixed here.
private struct Verdicts {
    static let kinds: [String: InterfaceKind] = ["lo": .loopback, "eth0": .ethernet, "eth1": .ethernet, "wlan0": .wifi,
                                                 "wwan0": .wwan, "wg0": .vpn, "tun0": .vpn, "br0": .bridge, "docker0": .bridge]
    static let names = Array(kinds.keys).sorted()
    static func kind(_ name: String) -> InterfaceKind { kinds[name] ?? .other }
    static func metered(_ name: String) -> Bool { name == "wlan0" || name == "wwan0" }
    static func ignored(_ name: String) -> Bool { name == "docker0" }
}

/// Random kernel messages of the kinds netlink sends, over a handful of indexes, names,
/// addresses and routes, so that sequences collide (same address twice, routes of removed links,
/// replaces across links, renames, addresses before their link).
private struct MessageGenerator {
    var rng: SplitMix64
    let indexes = [1, 2, 3, 4, 5]

    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    mutating func link() -> LinkFacts {
        let up = chance(70), carrier = chance(70)
        return LinkFacts(index: pick(indexes), name: pick(Verdicts.names), up: up, carrier: carrier,
                         loopback: false, operstate: pick(["up", "down", "lowerlayerdown", "unknown", "dormant"]))
    }

    mutating func address() -> AddressState {
        let ipv4 = chance(50)
        return AddressState(ifindex: pick(indexes + [9]), family: ipv4 ? .ipv4 : .ipv6,
                            address: ipv4 ? pick(["10.0.0.2", "10.0.1.2", "192.168.1.5"]) : pick(["2001:db8::2", "fe80::1", "fd00::5"]),
                            prefixLength: pick([24, 64]), scope: pick([.global, .global, .link, .host, .site]),
                            tentative: chance(25))
    }

    mutating func route() -> RouteState {
        let ipv4 = chance(50)
        let shape = Int.random(in: 0..<5, using: &rng)
        let destination: String?, prefixLength: Int
        switch shape {
        case 0, 1: destination = nil; prefixLength = 0                                    // default
        case 2: destination = ipv4 ? pick(["0.0.0.0", "128.0.0.0"]) : pick(["::", "8000::"]); prefixLength = 1
        case 3: destination = ipv4 ? "10.0.0.0" : "fe80::"; prefixLength = ipv4 ? 24 : 64
        default: destination = ipv4 ? "192.168.7.0" : "2001:db8:7::"; prefixLength = ipv4 ? 24 : 48
        }
        return RouteState(family: ipv4 ? .ipv4 : .ipv6, table: chance(90) ? RouteState.mainTable : 100,
                          destination: destination, prefixLength: prefixLength,
                          gateway: chance(60) ? (ipv4 ? pick(["10.0.0.1", "10.0.1.1"]) : pick(["fe80::1", "fe80::2"])) : nil,
                          oif: pick(indexes + [0]), metric: pick([0, 50, 100, 1024]),
                          type: chance(85) ? .unicast : pick([.blackhole, .unreachable, .local]))
    }

    /// Rules of the shapes VPN clients and kill switches add: a marked bypass, a table of its
    /// own, suppression of the main table's default, a refusal, an interface-bound lookup.
    mutating func rule() -> RoutingRule {
        let ipv4 = chance(50)
        let action = pick([RoutingRule.Action.lookup(table: RouteState.mainTable), .lookup(table: 100), .lookup(table: 100),
                           .prohibit, .unreachable, .blackhole, .goto(priority: 32766), .nop])
        var rule = RoutingRule(family: ipv4 ? .ipv4 : .ipv6, priority: pick([0, 100, 200, 32765, 32766]), action: action)
        if chance(30) { rule.fwmark = 0xca6c; rule.fwmask = 0xffff_ffff; rule.invert = chance(70) }
        if chance(20) { rule.suppressPrefixLength = 0 }
        if chance(15) { rule.outputInterface = pick(Verdicts.names) }
        return rule
    }

    /// An option of a router advertisement (what the kernel hands on with RTM_NEWNDUSEROPT).
    mutating func routerOption() -> RouterOption {
        let content = pick([RouterOption.Content.captivePortal("https://portal.example/api"),
                            .captivePortal(RouterOption.unrestricted), .dnsServers(["2001:db8::53"]),
                            .dnsServers(["2001:db8::53", "2001:db8::54"]), .searchDomains(["example.org"]),
                            .nat64Prefix("64:ff9b::/96")])
        return RouterOption(ifindex: pick(indexes), content: content, lifetime: pick([nil, 0, 600]), receivedAt: 1)
    }

    mutating func message() -> KernelChange {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<27: return .link(link())
        case 27..<31: return .linkRemoved(index: pick(indexes))
        case 31..<47: return .addressAdded(address())
        case 47..<56: return .addressRemoved(address())
        case 56..<78: return .routeAdded(route(), replace: chance(20))
        case 78..<86: return .routeRemoved(route())
        case 86..<92: return .ruleAdded(rule())
        case 92..<96: return .ruleRemoved(rule())
        default: return .routerOption(routerOption())
        }
    }

    mutating func modems() -> [ModemState] {
        guard chance(60) else { return [] }
        return [ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: [pick(["wwan0", "eth1", "wlan0"])],
                           accessTechnologies: pick([0, 1 << 14, 1 << 5]), signalQuality: pick([nil, 40, 80]),
                           roaming: pick([nil, true, false]))]
    }
}

/// The monitor's two ways of building the classifier's input, as it does them: the whole
/// snapshot from the table, and the slices of the indexes a batch of messages touched.
private func fullSnapshot(_ table: KernelStateTable, modems: [ModemState], probe: Probe?, path: ProbePath?) -> NetworkSnapshot {
    var kinds: [Int: InterfaceKind] = [:], metered: Set<Int> = [], ignored: Set<Int> = []
    for (index, facts) in table.links {
        kinds[index] = Verdicts.kind(facts.name)
        if Verdicts.metered(facts.name) { metered.insert(index) }
        if Verdicts.ignored(facts.name) { ignored.insert(index) }
    }
    var snapshot = table.snapshot(kinds: kinds, metered: metered, ignored: ignored, modems: modems, probe: probe)
    snapshot.probePath = path
    return snapshot
}

private func slice(_ table: KernelStateTable, at index: Int, previous: LinkSlice? = nil) -> LinkSlice {
    guard let facts = table.links[index] else { return table.slice(at: index, kind: .other, metered: false, ignored: false) }
    return table.slice(at: index, kind: Verdicts.kind(facts.name), metered: Verdicts.metered(facts.name),
                       ignored: Verdicts.ignored(facts.name), previous: previous)
}

/// For random sequences of kernel messages (links, addresses, routes of two tables, policy rules,
/// router advertisement options) and modem and checker updates, classifying only the slices the
/// messages touched gives what classifying the whole table gives: the same events, statuses,
/// reasons and change lists, in the same order. The monitor keeps both ways (the whole table
/// after a start, a re-dump or a new configuration; the slices after each batch of messages),
/// and this is what holds them to one answer.
@Suite struct IncrementalClassificationTests {
    @Test(arguments: 0..<40)
    func incrementalEqualsFullRecomputation(seed: Int) {
        var generator = MessageGenerator(rng: SplitMix64(seed: UInt64(seed) &* 0x1234_5678_9ABC_DEF1 &+ 7))
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var table = KernelStateTable()
        var full = StatusTracker(firstSequence: 10, now: t0)
        var incremental = StatusTracker(firstSequence: 10, now: t0)
        var modems: [ModemState] = [], probe: Probe?, path: ProbePath?
        var events = 0
        for step in 1...150 {
            var touched: Set<Int> = [], contents: Set<Int> = []
            var rulesChanged = false
            for _ in 0..<Int.random(in: 1...4, using: &generator.rng) {
                // Links change alone more often than not, as up/carrier changes do.
                let message = generator.chance(30) ? .link(generator.link()) : generator.message()
                switch message {
                case .ruleAdded, .ruleRemoved: rulesChanged = true
                case .link, .linkRemoved, .addressAdded, .addressRemoved, .routeAdded, .routeRemoved,
                     .routerOption, .routerOptionRejected: break
                }
                table.apply(message, touching: &touched, contents: &contents)
            }
            var newModems: [ModemState]?, newVerdict: (probe: Probe?, path: ProbePath?)?
            if generator.chance(8) {
                modems = generator.modems()
                newModems = modems
            }
            if generator.chance(8) {
                let result = generator.pick([Connectivity.full, .portal, .limited, .none])
                probe = generator.chance(80) ? Probe(url: "http://check/", result: result, rttMs: Double(step),
                                                     portalUrl: result == .portal ? "http://login/" : nil,
                                                     checkedAt: t0.addingTimeInterval(Double(step))) : nil
                path = generator.chance(80) ? ProbePath(full.status) : nil
                newVerdict = (probe, path)
            }
            let now = t0.addingTimeInterval(Double(step))
            let forced: Reason? = generator.chance(5) ? Reason(code: .configReloaded) : nil
            let expected = full.update(fullSnapshot(table, modems: modems, probe: probe, path: path), reason: forced, now: now)
            // As the monitor does: a slice whose link alone changed takes over the previous one's
            // addresses and routes.
            let slices = touched.sorted().map { index in
                slice(table, at: index, previous: contents.contains(index) ? nil : incremental.indexed.slices[index])
            }
            let actual = incremental.update(slices: slices, modems: newModems, verdict: newVerdict,
                                            rules: rulesChanged ? table.rules : nil, reason: forced, now: now)
            #expect(actual == expected, "seed \(seed), step \(step)")
            #expect(incremental.status == full.status, "seed \(seed), step \(step)")
            if case .emit = expected { events += 1 }
            guard actual == expected else { return }
        }
        #expect(incremental.indexed == IndexedSnapshot(fullSnapshot(table, modems: modems, probe: probe, path: path)))
        #expect(incremental.sequence == full.sequence)
        #expect(events > 10, "seed \(seed): the sequence should change the status often")
    }

    /// The grouped table gives the flat snapshot back, slice by slice (the rules beside them).
    @Test func slicesMakeUpTheSnapshot() {
        var generator = MessageGenerator(rng: SplitMix64(seed: 99))
        var table = KernelStateTable()
        for _ in 0..<400 { table.apply(generator.message()) }
        let snapshot = fullSnapshot(table, modems: [], probe: nil, path: nil)
        var indexed = IndexedSnapshot()
        for index in table.indexes { indexed.replace(slice(table, at: index)) }
        indexed.rules = table.rules
        #expect(indexed == IndexedSnapshot(snapshot))
        #expect(indexed.snapshot == snapshot)
        #expect(indexed.linkIndexes == snapshot.links.keys.sorted())
    }

    /// A table kept from messages equals one built from the same messages at once, whatever it
    /// emptied on the way, and one rebuilt from what it holds as a re-dump after an overrun does.
    @Test func tableKeptFromMessagesEqualsRebuiltOne() {
        var generator = MessageGenerator(rng: SplitMix64(seed: 7))
        var changes: [KernelChange] = []
        var table = KernelStateTable()
        for _ in 0..<400 {
            let change = generator.message()
            changes.append(change)
            table.apply(change)
        }
        #expect(table == KernelStateTable(changes))
        var rebuilt = KernelStateTable()
        for link in table.links.values { rebuilt.apply(.link(link)) }
        for address in table.allAddresses { rebuilt.apply(.addressAdded(address)) }
        for route in table.allRoutes { rebuilt.apply(.routeAdded(route, replace: false)) }
        for rule in table.rules { rebuilt.apply(.ruleAdded(rule)) }
        // No dump reads announcements back: the monitor takes them over from the table before.
        rebuilt.adoptAnnouncements(from: table)
        #expect(rebuilt == table)
    }
}
