/// A link as netlink reports it, before its kind is decided.
public struct LinkFacts: Equatable, Hashable, Sendable {
    public var index: Int
    /// The name for people and the wire; when the kernel's bytes are not UTF-8, with U+FFFD in
    /// place of what is not, and the bytes themselves in `rawName`.
    public var name: String
    /// The name's bytes as the kernel has them, when they are not valid UTF-8 (else nil): what
    /// sysfs paths are made of.
    public var rawName: [UInt8]?
    /// `IFLA_INFO_KIND`, nil for physical NICs.
    public var rtnlKind: String?
    /// `ifi_type` (ARPHRD_*).
    public var arpType: Int
    /// IFF_UP.
    public var up: Bool
    /// IFF_LOWER_UP.
    public var carrier: Bool
    /// IFF_LOOPBACK.
    public var loopback: Bool
    public var operstate: String
    /// IFLA_GROUP: the interface group (`ip link set … group`), for `suppress_ifgroup` rules.
    public var group: UInt32

    public init(index: Int, name: String, rawName: [UInt8]? = nil, rtnlKind: String? = nil, arpType: Int = ARPType.ether, up: Bool,
                carrier: Bool, loopback: Bool = false, operstate: String, group: UInt32 = 0) {
        self.index = index; self.name = name; self.rawName = rawName; self.rtnlKind = rtnlKind; self.arpType = arpType
        self.up = up; self.carrier = carrier; self.loopback = loopback; self.operstate = operstate
        self.group = group
    }

    /// The kernel's operstate names (`IF_OPER_*`), as `ip link` prints them in lower case.
    public static func operstateName(_ value: Int) -> String {
        switch value {
        case 1: return "notpresent"
        case 2: return "down"
        case 3: return "lowerlayerdown"
        case 4: return "testing"
        case 5: return "dormant"
        case 6: return "up"
        default: return "unknown"
        }
    }
}

/// One netlink message, decoded: what it changes in the table.
public enum KernelChange: Equatable, Sendable {
    /// RTM_NEWLINK (new link or any change of an existing one).
    case link(LinkFacts)
    /// RTM_DELLINK.
    case linkRemoved(index: Int)
    /// RTM_NEWADDR (also updates of flags, e.g. DAD finished).
    case addressAdded(AddressState)
    /// RTM_DELADDR.
    case addressRemoved(AddressState)
    /// RTM_NEWROUTE; `replace` when the message carried NLM_F_REPLACE (`ip route replace`).
    case routeAdded(RouteState, replace: Bool)
    /// RTM_DELROUTE.
    case routeRemoved(RouteState)
    /// RTM_NEWRULE.
    case ruleAdded(RoutingRule)
    /// RTM_DELRULE.
    case ruleRemoved(RoutingRule)
    /// RTM_NEWNDUSEROPT: an option of a router advertisement that the kernel handed on.
    case routerOption(RouterOption)
    /// RTM_NEWNDUSEROPT with an option that is not well formed: logged, applied to nothing.
    case routerOptionRejected(ifindex: Int, RouterOptionError)
}

/// The monitor's own picture of the kernel — links by index, addresses, the routes of every
/// table but `local`, the policy routing rules — kept from netlink messages. Not the libnl cache manager: that merges IPv6 routes of the same prefix
/// on different links. It also fills in what the kernel does not say: IPv4 routes
/// vanish without RTM_DELROUTE when their link goes down, and every route of a deleted link goes.
///
/// Addresses and routes are kept by interface index (a route by its output interface), so that
/// `slice(at:…)` hands the classifier one index's share without looking at the others.
public struct KernelStateTable: Equatable, Sendable {
    public private(set) var links: [Int: LinkFacts] = [:]
    private var addresses: [Int: [AddressKey: AddressState]] = [:]
    private var routes: [Int: [RouteKey: RouteState]] = [:]
    /// Both families' rules, each family's in the kernel's list order: by priority, and rules
    /// of equal priority in the order they were added.
    public private(set) var rules: [RoutingRule] = []
    /// What each link's routers announced (`RouterAnnouncements`), by index; no dump reads it
    /// back, so a table read afresh takes it over from the one before (`adoptAnnouncements`).
    public private(set) var announcements: [Int: RouterAnnouncements] = [:]

    public init() {}

    /// Applies `changes` in order.
    public init(_ changes: [KernelChange]) {
        for change in changes { apply(change) }
    }

    public var allAddresses: [AddressState] { addresses.values.flatMap(\.values) }
    public var allRoutes: [RouteState] { routes.values.flatMap(\.values) }

    /// Every index that has a link, an address or a route.
    public var indexes: Set<Int> {
        Set(links.keys).union(addresses.keys).union(routes.keys)
    }

    /// Applies one decoded netlink message.
    public mutating func apply(_ change: KernelChange) {
        var touched: Set<Int> = [], contents: Set<Int> = []
        apply(change, touching: &touched, contents: &contents)
    }

    /// Applies one decoded netlink message; adds to `touched` every index whose link, addresses
    /// or routes it may have changed, and to `contents` those whose addresses or routes it may
    /// have changed (an index only in `touched` saw its link change, nothing else).
    public mutating func apply(_ change: KernelChange, touching touched: inout Set<Int>, contents: inout Set<Int>) {
        switch change {
        case .link(let facts):
            touched.insert(facts.index)
            if let before = links[facts.index], before.up && before.carrier, !(facts.up && facts.carrier),
               announcements[facts.index] != nil {
                // The link left its network (down, or carrier lost: maybe another network next):
                // what that network's routers announced goes with it.
                contents.insert(facts.index)
                announcements[facts.index] = nil
            }
            if let before = links[facts.index], before.up, !facts.up {
                // Admin down flushes the link's IPv4 routes silently (IPv6 ones come with RTM_DELROUTE).
                if let own = routes[facts.index], own.values.contains(where: { $0.family == .ipv4 }) {
                    contents.insert(facts.index)
                    let kept = own.filter { $0.value.family != .ipv4 }
                    routes[facts.index] = kept.isEmpty ? nil : kept
                }
            }
            links[facts.index] = facts
        case .linkRemoved(let index):
            touched.insert(index)
            contents.insert(index)
            links[index] = nil
            addresses[index] = nil
            routes[index] = nil
            announcements[index] = nil
        case .addressAdded(let address):
            touched.insert(address.ifindex)
            contents.insert(address.ifindex)
            addresses[address.ifindex, default: [:]][AddressKey(address)] = address
        case .addressRemoved(let address):
            touched.insert(address.ifindex)
            contents.insert(address.ifindex)
            Self.remove(AddressKey(address), at: address.ifindex, from: &addresses)
        case .routeAdded(let route, let replace):
            guard Self.isTracked(route) else { return }
            touched.insert(route.oif)
            contents.insert(route.oif)
            if replace {
                // What NLM_F_REPLACE replaces may leave from any link.
                let slot = RouteKey.Slot(route)
                for (index, own) in routes where own.values.contains(where: { RouteKey.Slot($0) == slot }) {
                    touched.insert(index)
                    contents.insert(index)
                    let kept = own.filter { RouteKey.Slot($0.value) != slot }
                    routes[index] = kept.isEmpty ? nil : kept
                }
            }
            routes[route.oif, default: [:]][RouteKey(route)] = route
        case .routeRemoved(let route):
            guard Self.isTracked(route) else { return }
            touched.insert(route.oif)
            contents.insert(route.oif)
            Self.remove(RouteKey(route), at: route.oif, from: &routes)
            if route.family == .ipv6, route.isDefault, let router = route.gateway, var own = announcements[route.oif] {
                // The router's lifetime ended (the kernel removed its default route): what it
                // announced as the captive-portal API ends with it.
                own.routerGone(router)
                announcements[route.oif] = own.isEmpty ? nil : own
            }
        case .ruleAdded(let rule):
            // A rule read by the start-up dump may come again as the news of its addition.
            guard !rules.contains(rule) else { return }
            // After the last rule of the same family with this priority or a lower one, where the kernel puts it.
            let position = rules.lastIndex { $0.family == rule.family && $0.priority <= rule.priority }.map { $0 + 1 }
                ?? rules.firstIndex { $0.family == rule.family } ?? rules.endIndex
            rules.insert(rule, at: position)
        case .ruleRemoved(let rule):
            if let position = rules.firstIndex(of: rule) { rules.remove(at: position) }
        case .routerOption(let option):
            // Only for a link the table knows and that is up with carrier: the kernel hands on
            // options only from links that take advertisements.
            guard let link = links[option.ifindex], link.up, link.carrier else { return }
            var own = announcements[option.ifindex] ?? RouterAnnouncements()
            // A refreshed lifetime alone changes no status: nothing to classify again.
            let shownChanged = own.apply(option)
            announcements[option.ifindex] = own.isEmpty ? nil : own
            if shownChanged {
                touched.insert(option.ifindex)
                contents.insert(option.ifindex)
            }
        case .routerOptionRejected:
            break
        }
    }

    /// Drops the announcements that ran out by `now` (the clock of `RouterOption.receivedAt`);
    /// adds the indexes that lost any to `touched` and `contents`.
    public mutating func expireAnnouncements(now: Double, touching touched: inout Set<Int>, contents: inout Set<Int>) {
        for (index, var own) in announcements where own.nextDeadline.map({ $0 <= now }) ?? false {
            if own.expire(now: now) {
                touched.insert(index)
                contents.insert(index)
            }
            announcements[index] = own.isEmpty ? nil : own
        }
    }

    /// When the next announcement runs out; nil when none does.
    public var nextAnnouncementDeadline: Double? {
        announcements.values.compactMap(\.nextDeadline).min()
    }

    /// Takes over `other`'s announcements for the links this table has: a table read afresh
    /// (after an overrun) knows nothing of them.
    public mutating func adoptAnnouncements(from other: KernelStateTable) {
        announcements = other.announcements.filter { links[$0.key] != nil }
    }

    private static func remove<Key: Hashable, Value>(_ key: Key, at index: Int, from table: inout [Int: [Key: Value]]) {
        guard table[index]?[key] != nil else { return }
        table[index]?[key] = nil
        if table[index]?.isEmpty == true { table[index] = nil }
    }

    /// Every table counts but the local one (255: the machine's own addresses, never the way to
    /// the internet); the link-local fe80::/64 routes that every IPv6 link has are noise too.
    public static func isTracked(_ route: RouteState) -> Bool {
        guard route.table != RouteState.localTable else { return false }
        if route.family == .ipv6, route.prefixLength == 64, let destination = route.destination,
           destination.lowercased().hasPrefix("fe80:") { return false }
        return true
    }

    /// The classifier's input. `kinds` holds each link's decided kind (links without one are
    /// `other`); links in `ignored` disappear with their addresses and routes.
    public func snapshot(kinds: [Int: InterfaceKind], metered: Set<Int> = [], ignored: Set<Int> = [],
                         modems: [ModemState] = [], probe: Probe? = nil, constrained: Set<Int> = []) -> NetworkSnapshot {
        var linkStates: [Int: LinkState] = [:]
        for (index, facts) in links where !ignored.contains(index) {
            var link = LinkState(index: index, name: facts.name, kind: kinds[index] ?? .other, up: facts.up,
                                 carrier: facts.carrier, operstate: facts.operstate, metered: metered.contains(index),
                                 group: facts.group)
            link.constrained = constrained.contains(index)
            linkStates[index] = link
        }
        return NetworkSnapshot(links: linkStates,
                               addresses: Set(allAddresses.filter { !ignored.contains($0.ifindex) }),
                               routes: Set(allRoutes.filter { !ignored.contains($0.oif) }),
                               modems: modems, probe: probe, rules: rules,
                               announcements: announcements.filter { !ignored.contains($0.key) })
    }

    /// The share of index `index` in `snapshot(kinds:metered:ignored:…)`, given that link's
    /// kind and verdicts: empty when it is ignored.
    ///
    /// `previous` is the slice made for this index before, when only its link changed since:
    /// its addresses and routes are taken over as they are. It must have a link (an ignored or
    /// absent link's slice holds none of the index's addresses and routes).
    public func slice(at index: Int, kind: InterfaceKind, metered: Bool, ignored: Bool,
                      previous: LinkSlice? = nil, constrained: Bool = false) -> LinkSlice {
        guard !ignored else { return LinkSlice(index: index, link: nil) }
        let link = links[index].map { facts in
            var link = LinkState(index: index, name: facts.name, kind: kind, up: facts.up, carrier: facts.carrier,
                                 operstate: facts.operstate, metered: metered, group: facts.group)
            link.constrained = constrained
            return link
        }
        if let previous, previous.index == index, previous.link != nil {
            return previous.replacingLink(with: link)
        }
        let announced = link == nil ? nil : announcements[index]
        var ownAddresses: Set<AddressState> = []
        if let own = addresses[index] { ownAddresses.formUnion(own.values) }
        var ownRoutes: Set<RouteState> = []
        if let own = routes[index] { ownRoutes.formUnion(own.values) }
        return LinkSlice(index: index, link: link, addresses: ownAddresses, routes: ownRoutes, announcements: announced)
    }
}

/// An address is one per (link, family, address, prefix); a new message about it replaces its flags.
private struct AddressKey: Hashable {
    let ifindex: Int, family: AddressFamily, address: String, prefixLength: Int
    init(_ a: AddressState) { ifindex = a.ifindex; family = a.family; address = a.address; prefixLength = a.prefixLength }
}

/// A route is one per (destination, metric, next hop): IPv6 keeps equal prefixes on different
/// links apart. `Slot` is what NLM_F_REPLACE replaces (the kernel's fib key, without the next hop).
private struct RouteKey: Hashable {
    struct Slot: Hashable {
        let family: AddressFamily, table: UInt32, destination: String?, prefixLength: Int, metric: UInt32
        init(_ r: RouteState) {
            family = r.family; table = r.table; destination = r.destination; prefixLength = r.prefixLength; metric = r.metric
        }
    }
    let slot: Slot, oif: Int, gateway: String?
    init(_ r: RouteState) { slot = Slot(r); oif = r.oif; gateway = r.gateway }
}
