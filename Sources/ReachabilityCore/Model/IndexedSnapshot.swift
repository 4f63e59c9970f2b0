/// A `NetworkSnapshot` grouped by interface index: what the classifier and the reason deriver
/// work on. Built whole from a snapshot, or kept up to date slice by slice (`replace`).
public struct IndexedSnapshot: Equatable, Sendable {
    /// Non-empty slices by interface index.
    public private(set) var slices: [Int: LinkSlice] = [:]
    /// Indexes that have a link, ascending: the order of a status's interface list.
    public private(set) var linkIndexes: [Int] = []
    public var modems: [ModemState] = []
    /// The policy routing rules (see `NetworkSnapshot.rules`).
    public var rules: [RoutingRule] = [] {
        didSet { splitRules() }
    }
    /// `rules` of each family, kept apart once rather than on every classification.
    private var ipv4Rules: [RoutingRule] = []
    private var ipv6Rules: [RoutingRule] = []
    public var probe: Probe?
    public var probePath: ProbePath?
    /// The standby check's verdicts by interface index (see `NetworkSnapshot.standbyVerdicts`).
    public var standbyVerdicts: [Int: Probe] = [:]
    /// False when the connectivity check is off (see `NetworkSnapshot.connectivityCheck`).
    public var connectivityCheck = true
    /// Each uplink's measured quality (see `NetworkSnapshot.linkQualities`).
    public var linkQualities: [Int: LinkQuality] = [:]
    /// See `NetworkSnapshot.measuresQuality`.
    public var measuresQuality = false
    /// See `NetworkSnapshot.dataStalls`.
    public var dataStalls: [Int: DataStall] = [:]
    /// The Wi-Fi devices (see `NetworkSnapshot.wifi`).
    public var wifi: [WiFiDevice] = []

    public init() {}

    public init(_ snapshot: NetworkSnapshot) {
        var addresses: [Int: Set<AddressState>] = [:]
        for address in snapshot.addresses { addresses[address.ifindex, default: []].insert(address) }
        var routes: [Int: Set<RouteState>] = [:]
        for route in snapshot.routes { routes[route.oif, default: []].insert(route) }
        var indexes = Set(snapshot.links.keys)
        indexes.formUnion(addresses.keys)
        indexes.formUnion(routes.keys)
        for index in indexes {
            let link = snapshot.links[index]
            let slice = LinkSlice(index: index, link: link, addresses: addresses[index] ?? [],
                                  routes: routes[index] ?? [], announcements: link == nil ? nil : snapshot.announcements[index])
            slices[index] = slice
        }
        linkIndexes = snapshot.links.keys.sorted()
        modems = snapshot.modems
        rules = snapshot.rules
        splitRules()
        probe = snapshot.probe
        probePath = snapshot.probePath
        standbyVerdicts = snapshot.standbyVerdicts
        connectivityCheck = snapshot.connectivityCheck
        linkQualities = snapshot.linkQualities
        measuresQuality = snapshot.measuresQuality
        dataStalls = snapshot.dataStalls
        wifi = snapshot.wifi
    }

    /// The same picture as a flat `NetworkSnapshot`.
    public var snapshot: NetworkSnapshot {
        var links: [Int: LinkState] = [:], addresses: Set<AddressState> = [], routes: Set<RouteState> = []
        var announcements: [Int: RouterAnnouncements] = [:]
        for slice in slices.values {
            if let link = slice.link { links[slice.index] = link }
            if let announced = slice.announcements { announcements[slice.index] = announced }
            addresses.formUnion(slice.addresses)
            routes.formUnion(slice.routes)
        }
        var snapshot = NetworkSnapshot(links: links, addresses: addresses, routes: routes, modems: modems,
                                       probe: probe, probePath: probePath, rules: rules, announcements: announcements)
        snapshot.standbyVerdicts = standbyVerdicts
        snapshot.connectivityCheck = connectivityCheck
        snapshot.linkQualities = linkQualities
        snapshot.measuresQuality = measuresQuality
        snapshot.dataStalls = dataStalls
        snapshot.wifi = wifi
        return snapshot
    }

    /// The slice at `index` (empty when nothing is there).
    public func slice(at index: Int) -> LinkSlice {
        slices[index] ?? LinkSlice(index: index, link: nil)
    }

    /// Puts `slice` in place of whatever was at its index; returns what was there.
    @discardableResult
    public mutating func replace(_ slice: LinkSlice) -> LinkSlice {
        let old = slices[slice.index] ?? LinkSlice(index: slice.index, link: nil)
        slices[slice.index] = slice.isEmpty ? nil : slice
        let hadLink = old.link != nil, hasLink = slice.link != nil
        if hadLink != hasLink {
            if hasLink {
                let position = linkIndexes.firstIndex { $0 > slice.index } ?? linkIndexes.endIndex
                linkIndexes.insert(slice.index, at: position)
            } else {
                linkIndexes.removeAll { $0 == slice.index }
            }
        }
        return old
    }

    /// The rules of `family`, in the kernel's order.
    func rules(of family: AddressFamily) -> [RoutingRule] {
        switch family {
        case .ipv4: return ipv4Rules
        case .ipv6: return ipv6Rules
        }
    }

    private mutating func splitRules() {
        ipv4Rules = rules.filter { $0.family == .ipv4 }
        ipv6Rules = rules.filter { $0.family == .ipv6 }
    }

    /// The link at `index`, if any.
    func link(_ index: Int) -> LinkState? { slices[index]?.link }

    /// The latest publication of the connectivity checker.
    var verdict: ConnectivityRule.Verdict { ConnectivityRule.Verdict(probe: probe, path: probePath) }

    public static func == (a: IndexedSnapshot, b: IndexedSnapshot) -> Bool {
        a.slices == b.slices && a.modems == b.modems && a.rules == b.rules && a.probe == b.probe && a.probePath == b.probePath
            && a.standbyVerdicts == b.standbyVerdicts && a.connectivityCheck == b.connectivityCheck
            && a.linkQualities == b.linkQualities && a.measuresQuality == b.measuresQuality && a.dataStalls == b.dataStalls
            && a.wifi == b.wifi
    }
}
