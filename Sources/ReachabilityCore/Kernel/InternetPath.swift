/// Where an app's connection to the internet goes, per address family: the destination the
/// look-up is made for, and the kernel's decision (`PolicyRouting`).
///
/// "The internet" is not one address. reachd asks for a well-known public resolver's address,
/// the first of a short list that no route or rule more specific than half the address space
/// singles out: a split tunnel (routes or rules for some prefixes only) is then not taken for
/// the internet path, while a full tunnel (a default route, or OpenVPN's two halves) is.
public struct InternetPath: Equatable, Sendable {
    public var family: AddressFamily
    /// The address the look-up was made for.
    public var destination: String
    public var decision: PolicyRouting.Decision
    /// `destination`'s bits.
    var bits: AddressBits

    init(family: AddressFamily, destination: String, bits: AddressBits, decision: PolicyRouting.Decision) {
        self.family = family; self.destination = destination; self.bits = bits; self.decision = decision
    }

    /// The addresses reachd may ask for, in order of preference: the well-known public
    /// resolvers (Cloudflare's, Google's, Quad9's, OpenDNS's) first, which every network routes
    /// like the rest of the internet, then addresses spread over the unicast space (one in each
    /// of eight /8s of the four registries' blocks; IPv6: one in each registry's /12), so that a
    /// VPN or router that routes the public resolvers somewhere of their own (a DNS hijack, a
    /// tunnel for them alone) still leaves an address no specific route or rule singles out.
    public static func candidates(for family: AddressFamily) -> [String] {
        switch family {
        case .ipv4: return ipv4Candidates
        case .ipv6: return ipv6Candidates
        }
    }

    private static let ipv4Candidates = ["1.1.1.1", "8.8.8.8", "9.9.9.9", "208.67.222.222",
                                         "31.0.0.1", "62.0.0.1", "94.0.0.1", "130.0.0.1", "151.0.0.1", "176.0.0.1",
                                         "193.0.0.1", "223.0.0.1"]
    private static let ipv6Candidates = ["2606:4700:4700::1111", "2001:4860:4860::8888", "2620:fe::fe", "2620:119:35::35",
                                         "2400::1", "2600::1", "2800::1", "2a00::1", "2c00::1"]

    /// The candidates' bits, parsed once.
    private static let ipv4CandidateBits = ipv4Candidates.compactMap { AddressBits($0, family: .ipv4) }
    private static let ipv6CandidateBits = ipv6Candidates.compactMap { AddressBits($0, family: .ipv6) }

    static func candidateBits(for family: AddressFamily) -> [AddressBits] {
        switch family {
        case .ipv4: return ipv4CandidateBits
        case .ipv6: return ipv6CandidateBits
        }
    }

    /// True when `route` covers one of the candidates: the only routes a path look-up can find.
    public static func mayDecide(_ route: PolicyRouting.PrefixedRoute) -> Bool {
        candidateBits(for: route.route.family).contains { route.covers($0) }
    }

    /// The first candidate of `family` that no route of `routes` or rule of `rules` longer than
    /// /1 covers; the first candidate when every one is.
    public static func destination(for family: AddressFamily, routes: [PolicyRouting.PrefixedRoute],
                                   rules: [RoutingRule]) -> String {
        chosenCandidate(for: family, routes: routes, rules: rules).name
    }

    private static func chosenCandidate(for family: AddressFamily, routes: [PolicyRouting.PrefixedRoute],
                                        rules: [RoutingRule]) -> (name: String, bits: AddressBits) {
        let names = candidates(for: family)
        let bits = candidateBits(for: family)
        for (name, address) in zip(names, bits) {
            let byRoute = routes.contains { $0.route.family == family && $0.route.prefixLength > 1 && $0.covers(address) }
            if byRoute { continue }
            let byRule = rules.contains { rule in
                guard rule.family == family, let prefix = rule.destination, prefix.length > 1, let ruleBits = prefix.bits else { return false }
                return address.hasPrefix(ruleBits, length: prefix.length)
            }
            if byRule { continue }
            return (name, address)
        }
        return (names[0], bits[0])
    }

    /// The path of `family` over `routes` and `rules` (the kernel's defaults when empty).
    public static func decide(_ family: AddressFamily, routes: [PolicyRouting.PrefixedRoute], rules: [RoutingRule],
                              interfaceGroup: (Int) -> UInt32 = { _ in 0 }) -> InternetPath {
        let (destination, bits) = chosenCandidate(for: family, routes: routes, rules: rules)
        let query = RouteQuery(family: family, destination: bits)
        return InternetPath(family: family, destination: destination, bits: bits,
                            decision: PolicyRouting.decide(query, rules: rules, routes: routes, interfaceGroup: interfaceGroup))
    }

    /// The path as a status reports it; `linkName` names an interface index.
    public func routePath(linkName: (Int) -> String?) -> RoutePath {
        let first = decision.routes.first
        let result: RoutePath.Result
        switch decision.outcome {
        case .route: result = .route
        case .none: result = .none
        case .blocked(let type):
            switch type {
            case .unreachable: result = .unreachable
            case .blackhole: result = .blackhole
            case .prohibit: result = .prohibit
            case .unicast, .local, .broadcast, .anycast, .multicast, .throwRoute, .other: result = .none
            }
        }
        return RoutePath(family: family, destination: destination, result: result,
                         rule: decision.rule.map { Int($0.priority) }, table: decision.table.map { Int($0) },
                         interface: first.flatMap { linkName($0.oif) }, gateway: first?.gateway)
    }
}
