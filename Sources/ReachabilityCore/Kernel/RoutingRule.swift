/// One policy routing rule (`ip rule`), as the kernel reports it in RTM_NEWRULE: its selectors
/// and its action. Kept in the kernel's list order (priority, then the order they were added).
public struct RoutingRule: Hashable, Sendable {
    /// What a matching rule does (FR_ACT_*).
    public enum Action: Hashable, Sendable {
        /// Look the packet up in `table` (FR_ACT_TO_TBL).
        case lookup(table: UInt32)
        /// Go on at the first rule of priority `priority` (FR_ACT_GOTO).
        case goto(priority: UInt32)
        /// Nothing (FR_ACT_NOP).
        case nop
        /// Refuse the packet (FR_ACT_BLACKHOLE, FR_ACT_UNREACHABLE, FR_ACT_PROHIBIT).
        case blackhole, unreachable, prohibit
        /// An action this version does not know (the kernel treats it as a blackhole).
        case unknown(UInt8)

        /// `ip rule`'s words for it.
        public var description: String {
            switch self {
            case .lookup(let table): return "lookup \(RoutingRule.tableName(table))"
            case .goto(let priority): return "goto \(priority)"
            case .nop: return "nop"
            case .blackhole: return "blackhole"
            case .unreachable: return "unreachable"
            case .prohibit: return "prohibit"
            case .unknown(let value): return "action \(value)"
            }
        }
    }

    /// A port range selector (`sport`, `dport`), inclusive.
    public struct PortRange: Hashable, Sendable {
        public var start: UInt16, end: UInt16
        public init(_ start: UInt16, _ end: UInt16) { self.start = start; self.end = end }
    }

    /// An address selector (`from`, `to`): the address (as `ip rule` prints it) and its length.
    public struct Prefix: Hashable, Sendable {
        public var address: String
        public var length: Int
        /// The address's bits; nil when it does not parse (then it matches nothing).
        public var bits: AddressBits?
        public init(address: String, length: Int, family: AddressFamily) {
            self.address = address; self.length = length; bits = AddressBits(address, family: family)
        }
    }

    public var family: AddressFamily
    public var priority: UInt32
    public var action: Action
    /// `not`: the rule matches what its selectors do not (FIB_RULE_INVERT).
    public var invert: Bool = false
    public var source: Prefix?
    public var destination: Prefix?
    /// `tos`/`dsfield` (header), or `dscp`.
    public var tos: UInt8 = 0
    public var fwmark: UInt32 = 0
    public var fwmask: UInt32 = 0
    /// `iif NAME`; `iifDetached` when no such interface exists (then it matches nothing).
    public var inputInterface: String?
    public var inputInterfaceDetached = false
    /// `oif NAME` (whether that interface exists or not, such a rule never matches an
    /// ordinary connection, which names no output interface).
    public var outputInterface: String?
    public var uidRange: ClosedRange<UInt32>?
    public var ipProtocol: UInt8 = 0
    public var sourcePorts: PortRange?
    public var destinationPorts: PortRange?
    /// `suppress_prefixlength N`: a table's answer with a prefix this long or shorter is not taken.
    public var suppressPrefixLength: Int?
    /// `suppress_ifgroup G`: a table's answer out of an interface of group G is not taken.
    public var suppressInterfaceGroup: UInt32?
    /// `l3mdev`: the table of the packet's VRF.
    public var l3mdev = false
    /// `tun_id` (metadata of a collect-metadata tunnel).
    public var tunnelID: UInt64 = 0

    public init(family: AddressFamily, priority: UInt32, action: Action) {
        self.family = family; self.priority = priority; self.action = action
    }

    /// The table number as `ip` names the reserved ones.
    public static func tableName(_ table: UInt32) -> String {
        switch table {
        case 253: return "default"
        case RouteState.mainTable: return "main"
        case 255: return "local"
        default: return String(table)
        }
    }

    /// The rule as `ip rule` prints it (`32765: not from all fwmark 0xca6c lookup 51820`).
    public var description: String {
        var words = ["\(priority):"]
        if invert { words.append("not") }
        words.append("from \(source.map { "\($0.address)/\($0.length)" } ?? "all")")
        if let destination { words.append("to \(destination.address)/\(destination.length)") }
        if tos != 0 { words.append("tos \(tos)") }
        if fwmark != 0 || fwmask != 0 {
            words.append("fwmark 0x\(String(fwmark, radix: 16))" + (fwmask == ~0 ? "" : "/0x\(String(fwmask, radix: 16))"))
        }
        if let inputInterface { words.append("iif \(inputInterface)") }
        if let outputInterface { words.append("oif \(outputInterface)") }
        if let uidRange { words.append("uidrange \(uidRange.lowerBound)-\(uidRange.upperBound)") }
        if ipProtocol != 0 { words.append("ipproto \(ipProtocol)") }
        if let sourcePorts { words.append("sport \(sourcePorts.start)-\(sourcePorts.end)") }
        if let destinationPorts { words.append("dport \(destinationPorts.start)-\(destinationPorts.end)") }
        if l3mdev { words.append("l3mdev") }
        words.append(action.description)
        if let suppressPrefixLength { words.append("suppress_prefixlength \(suppressPrefixLength)") }
        if let suppressInterfaceGroup { words.append("suppress_ifgroup \(suppressInterfaceGroup)") }
        return words.joined(separator: " ")
    }

    /// The rules the kernel starts a namespace with (`ip rule` on a fresh machine): what a
    /// look-up uses when no rule list is known.
    public static func defaults(for family: AddressFamily) -> [RoutingRule] {
        switch family {
        case .ipv4:
            return [RoutingRule(family: .ipv4, priority: 0, action: .lookup(table: 255)),
                    RoutingRule(family: .ipv4, priority: 32766, action: .lookup(table: RouteState.mainTable)),
                    RoutingRule(family: .ipv4, priority: 32767, action: .lookup(table: 253))]
        case .ipv6:
            return [RoutingRule(family: .ipv6, priority: 0, action: .lookup(table: 255)),
                    RoutingRule(family: .ipv6, priority: 32766, action: .lookup(table: RouteState.mainTable))]
        }
    }
}
