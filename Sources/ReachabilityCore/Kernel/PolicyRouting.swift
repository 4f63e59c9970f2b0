/// The kernel's route look-up for an app's connection, as pure code: the rule list in order,
/// then the chosen table's longest matching prefix by metric (`fib_rules_lookup`,
/// `fib_table_lookup`; `fib6_rule_lookup` for IPv6). No I/O: the classifier runs it on the
/// monitor's picture, and the differential tests run it against the kernel's own answers.
///
/// The packet asked about is an app's first packet on an ordinary connection: a socket of a local
/// process, not bound to an interface or an address, no mark, TOS 0 (`RouteQuery`).
/// Where reachd's answer departs from the kernel's on purpose: a unicast route whose link is not
/// usable (down, no carrier, no usable address of the family) counts as absent, as a dead next
/// hop does — the kernel would still send IPv4 out of a link without carrier, and the packets
/// would be lost; and IPv6 gateways' neighbour state (which the kernel uses to prefer a
/// reachable router among routes of equal metric) is not looked at.
public enum PolicyRouting {
    /// What the kernel decides for one packet.
    public struct Decision: Equatable, Sendable {
        public enum Outcome: Equatable, Sendable {
            /// Out of these routes: one, or the next hops of a multipath route (the kernel picks
            /// one by a hash of the flow). Ordered by output interface.
            case route([RouteState])
            /// A route or rule of this type ended the look-up (`unreachable`, `blackhole`,
            /// `prohibit`; `local`, `broadcast`, … for routes that lead nowhere outside).
            case blocked(RouteType)
            /// No rule's table held a route: the kernel answers ENETUNREACH.
            case none
        }

        public var outcome: Outcome
        /// The rule that decided; nil when none did (`none`).
        public var rule: RoutingRule?
        /// The table whose route decided; nil when a rule's own action did, or none.
        public var table: UInt32?

        public init(outcome: Outcome, rule: RoutingRule? = nil, table: UInt32? = nil) {
            self.outcome = outcome; self.rule = rule; self.table = table
        }

        /// The routes out, when there is a way out.
        public var routes: [RouteState] {
            switch outcome {
            case .route(let routes): return routes
            case .blocked, .none: return []
            }
        }
    }

    /// A route with its destination's bits, ready for prefix matching.
    public struct PrefixedRoute: Hashable, Sendable {
        public var route: RouteState
        /// Zero for a default route.
        public var bits: AddressBits
        /// The route may carry traffic: not unicast (its type decides), or unicast out of a link
        /// that is up with carrier and a usable address of the route's family.
        public var usable: Bool

        /// nil when the destination does not parse.
        public init?(_ route: RouteState, usable: Bool) {
            if let destination = route.destination, route.prefixLength > 0 {
                guard let bits = AddressBits(destination, family: route.family) else { return nil }
                self.bits = bits
            } else {
                bits = AddressBits(high: 0, low: 0)
            }
            self.route = route
            self.usable = usable
        }

        public func covers(_ address: AddressBits) -> Bool {
            address.hasPrefix(bits, length: route.prefixLength)
        }
    }

    /// Decides where `query`'s packet goes: `rules` in the kernel's list order (one family; the
    /// defaults when empty), `routes` of every table but `local`. `usable` says which routes may
    /// carry traffic (by default their own `usable`); `interfaceGroup` gives a link's group
    /// (`ip link set … group`) for `suppress_ifgroup`.
    public static func decide(_ query: RouteQuery, rules: [RoutingRule], routes: [PrefixedRoute],
                              usable: (PrefixedRoute) -> Bool = { $0.usable },
                              interfaceGroup: (Int) -> UInt32 = { _ in 0 }) -> Decision {
        let list = rules.isEmpty ? RoutingRule.defaults(for: query.family) : rules
        // The routes that hold the destination, in the order a table is searched: longest prefix
        // first, then metric (then interface and gateway, so that the answer never depends on
        // the order they came in).
        let candidates = routes.filter { $0.route.family == query.family && $0.covers(query.destination) }.sorted { a, b in
            if a.route.prefixLength != b.route.prefixLength { return a.route.prefixLength > b.route.prefixLength }
            if a.route.metric != b.route.metric { return a.route.metric < b.route.metric }
            if a.route.oif != b.route.oif { return a.route.oif < b.route.oif }
            return (a.route.gateway ?? "") < (b.route.gateway ?? "")
        }
        var position = 0
        while position < list.count {
            let rule = list[position]
            position += 1
            guard matches(rule, query) else { continue }
            switch rule.action {
            case .goto(let target):
                // The kernel jumps to the first rule of that priority (only forward), and looks
                // at whether it matches like any other; without one, the goto is passed over.
                if let jump = list.indices.first(where: { $0 >= position && list[$0].priority == target }) {
                    position = jump
                }
                continue
            case .nop:
                continue
            case .blackhole, .unknown:
                return Decision(outcome: .blocked(.blackhole), rule: rule)
            case .unreachable:
                return Decision(outcome: .blocked(.unreachable), rule: rule)
            case .prohibit:
                return Decision(outcome: .blocked(.prohibit), rule: rule)
            case .lookup(let table) where table == RouteState.localTable:
                // The machine's own addresses: never the way to a public one.
                continue
            case .lookup(let table):
                switch lookup(table: table, in: candidates, usable: usable) {
                case .again:
                    continue
                case .blocked(let type):
                    return Decision(outcome: .blocked(type), rule: rule, table: table)
                case .found(let hops, let prefixLength):
                    if let suppress = rule.suppressPrefixLength, prefixLength <= suppress { continue }
                    if let group = rule.suppressInterfaceGroup, let first = hops.first, interfaceGroup(first.oif) == group { continue }
                    return Decision(outcome: .route(hops), rule: rule, table: table)
                }
            }
        }
        return Decision(outcome: .none)
    }

    /// Whether `rule`'s selectors take `query`'s packet (`fib_rule_match` with
    /// `fib4_rule_match` / `fib6_rule_match`), `not` applied.
    public static func matches(_ rule: RoutingRule, _ query: RouteQuery) -> Bool {
        selectorsMatch(rule, query) != rule.invert
    }

    private static func selectorsMatch(_ rule: RoutingRule, _ query: RouteQuery) -> Bool {
        guard rule.family == query.family else { return false }
        // A local process's packet comes in on the loopback device, and leaves by no chosen one.
        if let input = rule.inputInterface, rule.inputInterfaceDetached || input != "lo" { return false }
        if rule.outputInterface != nil { return false }
        if (rule.fwmark ^ query.mark) & rule.fwmask != 0 { return false }
        if rule.tunnelID != 0 || rule.l3mdev { return false }
        if let range = rule.uidRange, !range.contains(query.uid) { return false }
        if let destination = rule.destination, destination.length > 0 {
            guard let bits = destination.bits, query.destination.hasPrefix(bits, length: destination.length) else { return false }
        }
        if let source = rule.source, source.length > 0 {
            // No source address is chosen yet: IPv4 compares 0.0.0.0 with the prefix; IPv6 leaves
            // a rule with a source prefix out.
            switch query.family {
            case .ipv4:
                guard let bits = source.bits, AddressBits(high: 0, low: 0).hasPrefix(bits, length: source.length) else { return false }
            case .ipv6:
                return false
            }
        }
        if rule.tos != 0 { return false }
        if rule.ipProtocol != 0 && rule.ipProtocol != query.ipProtocol { return false }
        // The source port is not chosen yet either (0, in no range).
        if let ports = rule.sourcePorts, !(ports.start...max(ports.start, ports.end)).contains(0) { return false }
        if let ports = rule.destinationPorts, !(ports.start...max(ports.start, ports.end)).contains(query.destinationPort) { return false }
        return true
    }

    private enum TableAnswer {
        case found([RouteState], prefixLength: Int)
        case blocked(RouteType)
        case again
    }

    /// One table's answer: the longest prefix that has a route, its routes by metric; the first
    /// metric whose route is not unicast decides by its type (`throw` sends the look-up on to the
    /// next rule), a unicast one needs a usable next hop, else the look-up goes on to the next
    /// metric and then to shorter prefixes, as past a dead next hop.
    /// `candidates` are in search order (see `decide`); those of other tables are passed over
    /// where they stand, without a filtered copy.
    private static func lookup(table: UInt32, in candidates: [PrefixedRoute], usable: (PrefixedRoute) -> Bool) -> TableAnswer {
        var start = 0
        while start < candidates.count {
            guard candidates[start].route.table == table else { start += 1; continue }
            let first = candidates[start].route
            var end = start + 1
            while end < candidates.count, candidates[end].route.prefixLength == first.prefixLength,
                  candidates[end].route.metric == first.metric { end += 1 }
            switch first.type {
            case .unicast:
                var live: [RouteState] = []
                for position in start..<end {
                    let candidate = candidates[position]
                    if candidate.route.table == table, candidate.route.type == .unicast, usable(candidate) { live.append(candidate.route) }
                }
                if !live.isEmpty { return .found(live, prefixLength: first.prefixLength) }
            case .throwRoute:
                return .again
            case .unreachable, .blackhole, .prohibit, .local, .broadcast, .anycast, .multicast, .other:
                return .blocked(first.type)
            }
            start = end
        }
        return .again
    }
}

/// The packet a path look-up is for: an app's first packet to `destination` on a TCP connection
/// to port 443 (HTTPS, the most common), from a socket that is not bound and not marked.
public struct RouteQuery: Hashable, Sendable {
    public var family: AddressFamily
    public var destination: AddressBits
    /// The packet's mark (`SO_MARK`): 0 for an app; a tunnel's own packets carry one.
    public var mark: UInt32 = 0
    /// The user the socket belongs to, for `uidrange` rules.
    public var uid: UInt32 = RouteQuery.referenceUID
    public var ipProtocol: UInt8 = 6
    public var destinationPort: UInt16 = 443

    /// The user reachd asks for: 1000, the first ordinary user of a Debian-family system (the
    /// desktop user, a kiosk's app user). `uidrange` rules that leave it out do not decide the status.
    public static let referenceUID: UInt32 = 1000

    /// nil when `destination` is not an address of `family`.
    public init?(family: AddressFamily, destination: String, mark: UInt32 = 0) {
        guard let bits = AddressBits(destination, family: family) else { return nil }
        self.init(family: family, destination: bits, mark: mark)
    }

    /// For an address already parsed.
    public init(family: AddressFamily, destination bits: AddressBits, mark: UInt32 = 0) {
        self.family = family; self.destination = bits; self.mark = mark
    }
}
