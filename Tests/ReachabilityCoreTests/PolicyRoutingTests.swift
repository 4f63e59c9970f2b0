import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func rule(_ priority: UInt32, _ action: RoutingRule.Action, family: AddressFamily = .ipv4,
                  _ configure: (inout RoutingRule) -> Void = { _ in }) -> RoutingRule {
    var rule = RoutingRule(family: family, priority: priority, action: action)
    configure(&rule)
    return rule
}
private func route(_ destination: String? = nil, _ prefix: Int = 0, family: AddressFamily = .ipv4,
                   table: UInt32 = RouteState.mainTable, via gateway: String? = nil, oif: Int = 2, metric: UInt32 = 0,
                   type: RouteType = .unicast, usable: Bool = true) -> PolicyRouting.PrefixedRoute {
    PolicyRouting.PrefixedRoute(RouteState(family: family, table: table, destination: destination, prefixLength: prefix,
                                           gateway: gateway, oif: type == .unicast ? oif : 0, metric: metric, type: type),
                                usable: usable)!
}
private let main4 = RoutingRule.defaults(for: .ipv4)
private let main6 = RoutingRule.defaults(for: .ipv6)

/// One look-up: rules and routes in, the deciding rule's priority, table and the output (an
/// interface index, or the refusing type, or nothing).
struct LookupCase: CustomTestStringConvertible, Sendable {
    enum Expected: Equatable, Sendable { case via(Int), blocked(RouteType), none }
    let name: String
    var family: AddressFamily = .ipv4
    var destination = "1.1.1.1"
    var mark: UInt32 = 0
    let rules: [RoutingRule]
    let routes: [PolicyRouting.PrefixedRoute]
    let expected: Expected
    var rulePriority: UInt32? = nil
    var table: UInt32? = nil
    var testDescription: String { name }
}

// wg-quick: the tunnel's table, its marked packets around it, main without its default.
private let wgRules = [RoutingRule(family: .ipv4, priority: 0, action: .lookup(table: 255)),
                       rule(32764, .lookup(table: RouteState.mainTable)) { $0.suppressPrefixLength = 0 },
                       rule(32765, .lookup(table: 51820)) { $0.invert = true; $0.fwmark = 0xca6c; $0.fwmask = ~0 }] + main4.dropFirst()
private let wgRoutes = [route(table: 51820, oif: 5), route(via: "10.0.0.1", oif: 2, metric: 100),
                        route("10.0.0.0", 24, oif: 2)]

let lookupCases: [LookupCase] = [
    LookupCase(name: "main table default", rules: main4, routes: [route(via: "10.0.0.1")], expected: .via(2),
               rulePriority: 32766, table: 254),
    LookupCase(name: "lowest metric wins", rules: main4,
               routes: [route(via: "10.0.0.1", oif: 2, metric: 200), route(via: "10.1.0.1", oif: 3, metric: 100)],
               expected: .via(3)),
    LookupCase(name: "an unusable route is passed over, as a dead next hop",
               rules: main4, routes: [route(via: "10.1.0.1", oif: 3, metric: 100, usable: false), route(via: "10.0.0.1", oif: 2, metric: 200)],
               expected: .via(2)),
    LookupCase(name: "OpenVPN halves beat the default (longest prefix)", rules: main4,
               routes: [route(via: "10.0.0.1", oif: 2), route("0.0.0.0", 1, oif: 6), route("128.0.0.0", 1, oif: 6)],
               expected: .via(6)),
    LookupCase(name: "a split tunnel elsewhere leaves the default", rules: main4,
               routes: [route(via: "10.0.0.1", oif: 2), route("10.0.0.0", 8, oif: 6)], expected: .via(2)),
    LookupCase(name: "wg-quick: unmarked packets take the tunnel", rules: wgRules, routes: wgRoutes, expected: .via(5),
               rulePriority: 32765, table: 51820),
    LookupCase(name: "wg-quick: marked packets take the uplink", mark: 0xca6c, rules: wgRules, routes: wgRoutes, expected: .via(2),
               rulePriority: 32766, table: 254),
    LookupCase(name: "suppress_prefixlength 0 passes over the default only", destination: "10.0.0.9", rules: wgRules,
               routes: wgRoutes, expected: .via(2), rulePriority: 32764, table: 254),
    LookupCase(name: "Tailscale exit node: lookup 52 at 5270", rules: [rule(5270, .lookup(table: 52))] + main4,
               routes: [route(table: 52, oif: 7), route(via: "10.0.0.1", oif: 2)], expected: .via(7), rulePriority: 5270, table: 52),
    LookupCase(name: "a table a rule selects (multi-WAN)", rules: [rule(100, .lookup(table: 100))] + main4,
               routes: [route(table: 100, via: "10.0.0.1", oif: 2)], expected: .via(2), table: 100),
    LookupCase(name: "kill switch: unreachable default under the real one's metric", rules: main4,
               routes: [route(metric: 10, type: .unreachable) , route(via: "10.0.0.1", metric: 100)],
               expected: .blocked(.unreachable), table: 254),
    LookupCase(name: "blackhole default in main", rules: main4, routes: [route(type: .blackhole)], expected: .blocked(.blackhole)),
    LookupCase(name: "prohibit by rule", rules: [rule(10, .prohibit)] + main4, routes: [route(via: "10.0.0.1")],
               expected: .blocked(.prohibit), rulePriority: 10),
    LookupCase(name: "throw goes on to the next rule", rules: [rule(100, .lookup(table: 100))] + main4,
               routes: [route(table: 100, type: .throwRoute), route(via: "10.0.0.1", oif: 3)], expected: .via(3), table: 254),
    LookupCase(name: "an empty table goes on", rules: [rule(100, .lookup(table: 100))] + main4,
               routes: [route(via: "10.0.0.1", oif: 3)], expected: .via(3)),
    LookupCase(name: "nothing anywhere", rules: main4, routes: [], expected: .none),
    LookupCase(name: "goto skips the rules in between", rules: [rule(10, .goto(priority: 30)), rule(20, .unreachable),
                                                                rule(30, .lookup(table: 100))] + main4,
               routes: [route(table: 100, oif: 4), route(via: "10.0.0.1")], expected: .via(4), rulePriority: 30),
    LookupCase(name: "goto to a rule that does not match goes on after it",
               rules: [rule(10, .goto(priority: 30)), rule(20, .unreachable),
                       rule(30, .lookup(table: 100)) { $0.fwmark = 1; $0.fwmask = ~0 }] + main4,
               routes: [route(table: 100, oif: 4), route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "goto without a target is passed over", rules: [rule(10, .goto(priority: 31)), rule(20, .blackhole)] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.blackhole), rulePriority: 20),
    LookupCase(name: "nop does nothing", rules: [rule(10, .nop)] + main4, routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "fwmark with a mask: mark 0 matches 0x100/0x100? no",
               rules: [rule(10, .unreachable) { $0.fwmark = 0x100; $0.fwmask = 0x100 }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "fwmark 0/0xff matches an unmarked packet",
               rules: [rule(10, .unreachable) { $0.fwmark = 0; $0.fwmask = 0xff }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.unreachable)),
    LookupCase(name: "iif lo matches a local process's packet", rules: [rule(10, .unreachable) { $0.inputInterface = "lo" }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.unreachable)),
    LookupCase(name: "iif eth0 does not", rules: [rule(10, .unreachable) { $0.inputInterface = "eth0" }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "not iif eth0 does", rules: [rule(10, .unreachable) { $0.inputInterface = "eth0"; $0.invert = true }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.unreachable)),
    LookupCase(name: "oif never matches an unbound socket", rules: [rule(10, .unreachable) { $0.outputInterface = "eth0" }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "to a prefix that holds the destination", rules: [rule(10, .lookup(table: 9)) {
        $0.destination = RoutingRule.Prefix(address: "1.0.0.0", length: 8, family: .ipv4) }] + main4,
               routes: [route(table: 9, oif: 8), route(via: "10.0.0.1")], expected: .via(8)),
    LookupCase(name: "to a prefix that does not", rules: [rule(10, .lookup(table: 9)) {
        $0.destination = RoutingRule.Prefix(address: "9.0.0.0", length: 8, family: .ipv4) }] + main4,
               routes: [route(table: 9, oif: 8), route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "from a prefix: an IPv4 source 0.0.0.0 is in 0.0.0.0/1",
               rules: [rule(10, .unreachable) { $0.source = RoutingRule.Prefix(address: "0.0.0.0", length: 1, family: .ipv4) }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.unreachable)),
    LookupCase(name: "from 10.0.0.0/8 does not match before a source is chosen",
               rules: [rule(10, .unreachable) { $0.source = RoutingRule.Prefix(address: "10.0.0.0", length: 8, family: .ipv4) }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "tos never matches TOS 0", rules: [rule(10, .unreachable) { $0.tos = 0x10 }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "ipproto tcp dport 443 matches", rules: [rule(10, .unreachable) {
        $0.ipProtocol = 6; $0.destinationPorts = .init(443, 443) }] + main4, routes: [route(via: "10.0.0.1")], expected: .blocked(.unreachable)),
    LookupCase(name: "ipproto udp does not", rules: [rule(10, .unreachable) { $0.ipProtocol = 17 }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "dport 80 does not", rules: [rule(10, .unreachable) { $0.destinationPorts = .init(80, 80) }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "sport never matches (no port chosen)", rules: [rule(10, .unreachable) { $0.sourcePorts = .init(1, 65535) }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "uidrange with the reference user", rules: [rule(10, .lookup(table: 9)) { $0.uidRange = 1000...1999 }] + main4,
               routes: [route(table: 9, oif: 8), route(via: "10.0.0.1")], expected: .via(8)),
    LookupCase(name: "uidrange without it", rules: [rule(10, .lookup(table: 9)) { $0.uidRange = 0...999 }] + main4,
               routes: [route(table: 9, oif: 8), route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "suppress_ifgroup passes over a route out of that group",
               rules: [rule(10, .lookup(table: RouteState.mainTable)) { $0.suppressInterfaceGroup = 7 }, rule(20, .blackhole)] + main4,
               routes: [route(via: "10.0.0.1", oif: 2)], expected: .blocked(.blackhole), rulePriority: 20),
    LookupCase(name: "l3mdev and tun_id never match", rules: [rule(10, .unreachable) { $0.l3mdev = true },
                                                            rule(11, .unreachable) { $0.tunnelID = 5 }] + main4,
               routes: [route(via: "10.0.0.1")], expected: .via(2)),
    LookupCase(name: "an unknown action refuses, as the kernel's blackhole", rules: [rule(10, .unknown(42))] + main4,
               routes: [route(via: "10.0.0.1")], expected: .blocked(.blackhole)),
    LookupCase(name: "IPv6 default", family: .ipv6, destination: "2606:4700:4700::1111", rules: main6,
               routes: [route(family: .ipv6, via: "fe80::1", oif: 3)], expected: .via(3)),
    LookupCase(name: "IPv6 from a prefix never matches before a source is chosen", family: .ipv6, destination: "2606:4700:4700::1111",
               rules: [rule(10, .unreachable, family: .ipv6) { $0.source = RoutingRule.Prefix(address: "::", length: 1, family: .ipv6) }] + main6,
               routes: [route(family: .ipv6, via: "fe80::1", oif: 3)], expected: .via(3)),
    LookupCase(name: "IPv6 wg-quick twin", family: .ipv6, destination: "2606:4700:4700::1111",
               rules: [rule(32764, .lookup(table: RouteState.mainTable), family: .ipv6) { $0.suppressPrefixLength = 0 },
                       rule(32765, .lookup(table: 51820), family: .ipv6) { $0.invert = true; $0.fwmark = 0xca6c; $0.fwmask = ~0 }] + main6,
               routes: [route(family: .ipv6, table: 51820, oif: 5), route(family: .ipv6, via: "fe80::1", oif: 3)], expected: .via(5)),
    LookupCase(name: "the other family's rules and routes do not count", family: .ipv6, destination: "2606:4700:4700::1111",
               rules: [rule(10, .unreachable)] + main6, routes: [route(via: "10.0.0.1")], expected: .none),
]

@Suite struct PolicyRoutingTests {
    @Test(arguments: lookupCases)
    func decides(_ c: LookupCase) throws {
        let query = try #require(RouteQuery(family: c.family, destination: c.destination, mark: c.mark))
        let decision = PolicyRouting.decide(query, rules: c.rules, routes: c.routes, interfaceGroup: { $0 == 2 ? 7 : 0 })
        switch c.expected {
        case .via(let oif): #expect(decision.routes.first?.oif == oif)
        case .blocked(let type): #expect(decision.outcome == .blocked(type))
        case .none: #expect(decision.outcome == .none)
        }
        if let priority = c.rulePriority { #expect(decision.rule?.priority == priority) }
        if let table = c.table { #expect(decision.table == table) }
    }

    @Test func prefixMatching() throws {
        let a = try #require(AddressBits("10.1.2.3", family: .ipv4))
        #expect(a.hasPrefix(try #require(AddressBits("10.0.0.0", family: .ipv4)), length: 8))
        #expect(!a.hasPrefix(try #require(AddressBits("10.0.0.0", family: .ipv4)), length: 16))
        #expect(a.hasPrefix(try #require(AddressBits("10.1.2.3", family: .ipv4)), length: 32))
        let b = try #require(AddressBits("2001:db8::1", family: .ipv6))
        #expect(b.hasPrefix(try #require(AddressBits("2001:db8::", family: .ipv6)), length: 32))
        #expect(b.hasPrefix(try #require(AddressBits("2001:db8::1", family: .ipv6)), length: 128))
        #expect(!b.hasPrefix(try #require(AddressBits("2001:db8::2", family: .ipv6)), length: 128))
        #expect(b.hasPrefix(try #require(AddressBits("2001:db8::", family: .ipv6)), length: 100))
        #expect(AddressBits("300.1.1.1", family: .ipv4) == nil)
    }

    /// The address asked about is one no specific route or rule singles out.
    @Test func destinationAvoidsSplitTunnels() {
        #expect(InternetPath.destination(for: .ipv4, routes: [], rules: []) == "1.1.1.1")
        #expect(InternetPath.destination(for: .ipv4, routes: [route("1.0.0.0", 8, oif: 6)], rules: []) == "8.8.8.8")
        #expect(InternetPath.destination(for: .ipv4, routes: [route("0.0.0.0", 1, oif: 6)], rules: []) == "1.1.1.1")
        let to8 = rule(10, .lookup(table: 9)) { $0.destination = RoutingRule.Prefix(address: "8.0.0.0", length: 7, family: .ipv4) }
        #expect(InternetPath.destination(for: .ipv4, routes: [route("1.0.0.0", 8, oif: 6)], rules: [to8]) == "208.67.222.222", "8.0.0.0/7 holds 8.8.8.8 and 9.9.9.9")
        #expect(InternetPath.destination(for: .ipv6, routes: [], rules: []) == "2606:4700:4700::1111")
    }

    /// A VPN (or router) that routes the public resolvers elsewhere — host routes, or rules for
    /// their prefixes — does not move the internet path: the look-up is made for an address
    /// that no route or rule singles out, and finds the default route.
    @Test func resolversRoutedElsewhereDoNotMoveThePath() {
        let hijack4 = ["1.1.1.1", "8.8.8.8", "9.9.9.9", "208.67.222.222"].map { route($0, 32, oif: 6) }
        let default4 = route(via: "10.0.0.1", oif: 2)
        #expect(InternetPath.destination(for: .ipv4, routes: hijack4 + [default4], rules: main4) == "31.0.0.1")
        let path4 = InternetPath.decide(.ipv4, routes: hijack4 + [default4], rules: main4)
        #expect(path4.decision.routes.first?.oif == 2)

        let byRule = [("2606:4700::", 32), ("2001:4860::", 32), ("2620::", 16)].enumerated().map { index, prefix in
            rule(UInt32(100 + index), .lookup(table: 7), family: .ipv6) {
                $0.destination = RoutingRule.Prefix(address: prefix.0, length: prefix.1, family: .ipv6)
            }
        } + main6
        let vpn6 = route(family: .ipv6, table: 7, oif: 6)
        let default6 = route(family: .ipv6, via: "fe80::1", oif: 2)
        #expect(InternetPath.destination(for: .ipv6, routes: [vpn6, default6], rules: byRule) == "2400::1")
        #expect(InternetPath.decide(.ipv6, routes: [vpn6, default6], rules: byRule).decision.routes.first?.oif == 2)

        // Every candidate singled out: the first is asked, as before.
        let everywhere = InternetPath.candidates(for: .ipv4).map { route($0, 32, oif: 6) }
        #expect(InternetPath.destination(for: .ipv4, routes: everywhere, rules: main4) == "1.1.1.1")
    }

    @Test func describesRulesAsIPDoes() {
        #expect(wgRules[2].description == "32765: not from all fwmark 0xca6c lookup 51820")
        #expect(wgRules[1].description == "32764: from all lookup main suppress_prefixlength 0")
    }
}

// MARK: - The status on policy-routed machines

private func link(_ index: Int, _ name: String, _ kind: InterfaceKind = .ethernet, group: UInt32 = 0) -> LinkState {
    LinkState(index: index, name: name, kind: kind, up: true, carrier: true, operstate: "up", group: group)
}
private let lo = link(1, "lo", .loopback)
private let uplink = link(2, "eth0")
private let wg0 = link(5, "wg0", .vpn)
private func v4(_ index: Int, _ address: String) -> AddressState {
    AddressState(ifindex: index, family: .ipv4, address: address, prefixLength: 24)
}
private func raw(_ r: PolicyRouting.PrefixedRoute) -> RouteState { r.route }

@Suite struct PolicyRoutedStatusTests {
    private func status(_ links: [LinkState], _ routes: [RouteState], _ rules: [RoutingRule]) -> Status {
        var addresses: Set<AddressState> = []
        for link in links where link.kind != .loopback { addresses.insert(v4(link.index, "10.0.\(link.index).2")) }
        let snapshot = NetworkSnapshot(links: Dictionary(uniqueKeysWithValues: links.map { ($0.index, $0) }),
                                       addresses: addresses, routes: Set(routes), rules: rules)
        return Classifier.classify(snapshot, since: t0)
    }

    @Test func wgQuickIsAVPNOverTheUplink() {
        let s = status([lo, uplink, wg0], wgRoutes.map(raw), wgRules)
        #expect(s.status == .ethernet && s.primary?.name == "eth0" && s.vpn?.name == "wg0")
        #expect(s.gateways == ["10.0.0.1"])
        #expect(s.routing.first == RoutePath(family: .ipv4, destination: "1.1.1.1", result: .route, rule: 32765, table: 51820,
                                              interface: "wg0", gateway: nil))
        #expect(s.flags.contains(.transientConnection))
        #expect(ProbePath(s)?.interface == "wg0", "the check goes through the tunnel")
    }

    @Test func tailscaleExitNodeIsAVPN() {
        let ts = link(7, "tailscale0", .vpn)
        let s = status([lo, uplink, ts], [raw(route(table: 52, oif: 7)), raw(route(via: "10.0.2.1", oif: 2))],
                       [rule(5270, .lookup(table: 52))] + main4)
        #expect(s.status == .ethernet && s.primary?.name == "eth0" && s.vpn?.name == "tailscale0")
        #expect(s.gateways == ["10.0.2.1"])
    }

    @Test func aTunnelWithAWorseMetricIsNotThePath() {
        let s = status([lo, uplink, wg0], [raw(route(oif: 5, metric: 1000)), raw(route(via: "10.0.2.1", oif: 2, metric: 100))], main4)
        #expect(s.vpn == nil && s.primary?.name == "eth0")
    }

    @Test func aSplitTunnelIsNoVPN() {
        let s = status([lo, uplink, wg0], [raw(route("10.8.0.0", 16, oif: 5)), raw(route(via: "10.0.2.1", oif: 2))], main4)
        #expect(s.vpn == nil && s.status == .ethernet)
    }

    @Test func aRuleSelectedTableIsReachable() {
        let s = status([lo, uplink], [raw(route(table: 100, via: "10.0.2.1", oif: 2))], [rule(100, .lookup(table: 100))] + main4)
        #expect(s.status == .ethernet && s.reachable && s.gateways == ["10.0.2.1"])
        #expect(s.routing[0].table == 100 && s.routing[0].rule == 100)
    }

    @Test func aKillSwitchIsNotReachable() {
        let s = status([lo, uplink], [raw(route(metric: 10, type: .unreachable)), raw(route(via: "10.0.2.1", oif: 2, metric: 100))], main4)
        #expect(!s.reachable && s.status == .notReachable && s.connectivity == .none)
        #expect(s.routing[0].result == .unreachable)
    }

    /// The kill switch event names itself; lifting it is an event too; a rule change is one.
    @Test func killSwitchAndRuleEvents() throws {
        let links: [Int: LinkState] = [1: lo, 2: uplink]
        let addresses: Set<AddressState> = [v4(2, "10.0.2.2")]
        let real = raw(route(via: "10.0.2.1", oif: 2, metric: 100))
        var tracker = StatusTracker(snapshot: NetworkSnapshot(links: links, addresses: addresses, routes: [real]), now: t0)
        #expect(tracker.status.reachable)

        let block = raw(route(metric: 10, type: .blackhole))
        guard case .emit(let blocked) = tracker.update(NetworkSnapshot(links: links, addresses: addresses, routes: [real, block]),
                                                       now: t0.addingTimeInterval(1)) else { Issue.record("no event"); return }
        #expect(blocked.reason.code == .killSwitch)
        #expect(blocked.reason.detail == "ipv4 blackhole route, table main (rule 32766)")
        #expect(!blocked.current.reachable && blocked.changes.contains("routing"))

        guard case .emit(let lifted) = tracker.update(NetworkSnapshot(links: links, addresses: addresses, routes: [real]),
                                                      now: t0.addingTimeInterval(2)) else { Issue.record("no event"); return }
        #expect(lifted.reason.code == .routeRemoved && lifted.current.reachable)

        let prohibit = rule(10, .prohibit)
        guard case .emit(let ruled) = tracker.update(slices: [], rules: [prohibit] + main4, now: t0.addingTimeInterval(3))
        else { Issue.record("no event"); return }
        #expect(ruled.reason.code == .killSwitch && !ruled.current.reachable)
        guard case .emit(let unruled) = tracker.update(slices: [], rules: main4, now: t0.addingTimeInterval(4))
        else { Issue.record("no event"); return }
        #expect(unruled.reason.code == .ruleRemoved && unruled.reason.detail == "10: from all prohibit")

        // A rule that changes nothing the status says is no event.
        #expect(tracker.update(slices: [], rules: [rule(10, .lookup(table: 77))] + main4, now: t0.addingTimeInterval(5)) == .none)
    }
}
