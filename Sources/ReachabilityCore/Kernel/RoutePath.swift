/// How the kernel routes an app's connection to the internet in one address family (varlink
/// type `RoutePath`): the address asked about, the rule and table that decided, and what they
/// found. A status lists one per family, IPv4 first.
public struct RoutePath: Codable, Equatable, Hashable, Sendable {
    /// What the look-up ended in.
    public enum Result: String, Codable, Sendable, CaseIterable {
        /// A route out of `interface`.
        case route
        /// A route or rule of that type (a kill switch, or a network set up to refuse).
        case unreachable, blackhole, prohibit
        /// No table had a route.
        case none
    }

    public var family: AddressFamily
    /// The public address the look-up was made for.
    public var destination: String
    public var result: Result
    /// The priority of the rule that decided (`ip rule`); nil when none did.
    public var rule: Int?
    /// The table whose route decided; nil when a rule's own action did, or none.
    public var table: Int?
    /// The output interface (a tunnel, when one carries the path).
    public var interface: String?
    public var gateway: String?

    public init(family: AddressFamily, destination: String, result: Result, rule: Int? = nil, table: Int? = nil,
                interface: String? = nil, gateway: String? = nil) {
        self.family = family; self.destination = destination; self.result = result; self.rule = rule
        self.table = table; self.interface = interface; self.gateway = gateway
    }

    enum CodingKeys: String, CodingKey { case family, destination, result, rule, table, interface, gateway }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(family: try c.decode(AddressFamily.self, forKey: .family),
                  destination: try c.decode(String.self, forKey: .destination),
                  result: try c.decode(Result.self, forKey: .result),
                  rule: try c.decodeIfPresent(Int.self, forKey: .rule),
                  table: try c.decodeIfPresent(Int.self, forKey: .table),
                  interface: try c.decodeIfPresent(String.self, forKey: .interface),
                  gateway: try c.decodeIfPresent(String.self, forKey: .gateway))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(family, forKey: .family); try c.encode(destination, forKey: .destination)
        try c.encode(result, forKey: .result); try c.encode(rule, forKey: .rule)
        try c.encode(table, forKey: .table); try c.encode(interface, forKey: .interface)
        try c.encode(gateway, forKey: .gateway)
    }

    /// `table 51820 (rule 32765)` / `rule 100` — what decided, for people.
    public var decidedBy: String {
        var words: [String] = []
        if let table { words.append("table \(RoutingRule.tableName(UInt32(truncatingIfNeeded: table)))") }
        if let rule { words.append(table == nil ? "rule \(rule)" : "(rule \(rule))") }
        return words.joined(separator: " ")
    }
}
