import FoundationEssentials

// Every wire object encodes all of its fields, `null` for an absent optional (docs/protocol.md),
// so strict varlink clients can validate it; that is why each type spells out `encode(to:)`.

/// One network interface as the kernel reports it (varlink type `Interface`).
public struct Interface: Codable, Equatable, Hashable, Sendable {
    public var name: String
    public var index: Int
    public var kind: InterfaceKind
    /// IFF_UP: administratively up.
    public var up: Bool
    /// IFF_LOWER_UP: the link has carrier.
    public var carrier: Bool
    /// The kernel's operational state name (`up`, `down`, `dormant`, `unknown`, …).
    public var operstate: String
    /// Addresses in CIDR form (`192.168.1.20/24`, `2001:db8::1/64`); tentative IPv6 addresses are left out.
    public var addresses: [String]
    /// Metered: `[Interfaces] Metered=`, or guessed from the link's DHCP lease or by
    /// NetworkManager unless `NotMetered=` names it (a cellular link is expensive without it).
    public var metered: Bool
    /// DNS servers the link's routers announce (router advertisement RDNSS), in the order announced.
    public var dns: [String]
    /// The DNS search list the link's routers announce (DNSSL).
    public var searchDomains: [String]
    /// The NAT64 prefix the link's routers announce (PREF64, `64:ff9b::/96`).
    public var nat64Prefix: String?
    /// The captive-portal API URI the link's routers announce (RFC 8910); the connectivity check
    /// asks it first.
    public var captivePortalApi: String?
    /// The standby check's verdict on this uplink (`CheckStandby=`); nil for the primary (its
    /// verdict is `Status.connectivity`) and for interfaces not checked.
    public var connectivity: Connectivity?
    /// How good this uplink is, measured; nil before anything is known and for links that carry
    /// no internet traffic. Its figures (RTT, samples, times) change with every measurement
    /// without making an event: only its `level` and `effectiveType` do.
    public var linkQuality: LinkQuality?
    /// The apps' traffic over this uplink goes unanswered: the evidence, from when it was first
    /// suspected until a segment comes back or the check finds the uplink working; nil otherwise.
    public var stall: DataStall?
    /// The Wi-Fi connection as its owner (iwd, NetworkManager, wpa_supplicant) reports it;
    /// nil for other kinds and while not connected. Only its network, access point and bars
    /// make an event (`WiFi.differsAsShown`).
    public var wifi: WiFi?

    public init(name: String, index: Int, kind: InterfaceKind, up: Bool, carrier: Bool,
                operstate: String, addresses: [String], metered: Bool, dns: [String] = [],
                searchDomains: [String] = [], nat64Prefix: String? = nil, captivePortalApi: String? = nil,
                connectivity: Connectivity? = nil, linkQuality: LinkQuality? = nil, stall: DataStall? = nil,
                wifi: WiFi? = nil) {
        self.name = name; self.index = index; self.kind = kind; self.up = up
        self.carrier = carrier; self.operstate = operstate; self.addresses = addresses; self.metered = metered
        self.dns = dns; self.searchDomains = searchDomains; self.nat64Prefix = nat64Prefix
        self.captivePortalApi = captivePortalApi
        self.connectivity = connectivity
        self.linkQuality = linkQuality
        self.stall = stall
        self.wifi = wifi
    }

    enum CodingKeys: String, CodingKey {
        case name, index, kind, up, carrier, operstate, addresses, metered, dns, searchDomains, nat64Prefix, captivePortalApi,
             connectivity, linkQuality, stall
        case wifi
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // A daemon from before router advertisements were read sends none of their fields.
        self.init(name: try c.decode(String.self, forKey: .name), index: try c.decode(Int.self, forKey: .index),
                  kind: try c.decode(InterfaceKind.self, forKey: .kind), up: try c.decode(Bool.self, forKey: .up),
                  carrier: try c.decode(Bool.self, forKey: .carrier), operstate: try c.decode(String.self, forKey: .operstate),
                  addresses: try c.decode([String].self, forKey: .addresses), metered: try c.decode(Bool.self, forKey: .metered),
                  dns: try c.decodeIfPresent([String].self, forKey: .dns) ?? [],
                  searchDomains: try c.decodeIfPresent([String].self, forKey: .searchDomains) ?? [],
                  nat64Prefix: try c.decodeIfPresent(String.self, forKey: .nat64Prefix),
                  captivePortalApi: try c.decodeIfPresent(String.self, forKey: .captivePortalApi),
                  // A daemon from before standby checks sends none.
                  connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .connectivity),
                  // Nor one from before link quality was measured.
                  linkQuality: try c.decodeIfPresent(LinkQuality.self, forKey: .linkQuality),
                  // Nor one from before data stalls were watched.
                  stall: try c.decodeIfPresent(DataStall.self, forKey: .stall),
                  // Nor one from before Wi-Fi owners were read.
                  wifi: try c.decodeIfPresent(WiFi.self, forKey: .wifi))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name); try c.encode(index, forKey: .index)
        try c.encode(kind, forKey: .kind); try c.encode(up, forKey: .up)
        try c.encode(carrier, forKey: .carrier); try c.encode(operstate, forKey: .operstate)
        try c.encode(addresses, forKey: .addresses); try c.encode(metered, forKey: .metered)
        try c.encode(dns, forKey: .dns); try c.encode(searchDomains, forKey: .searchDomains)
        try c.encode(nat64Prefix, forKey: .nat64Prefix); try c.encode(captivePortalApi, forKey: .captivePortalApi)
        try c.encode(connectivity, forKey: .connectivity); try c.encode(linkQuality, forKey: .linkQuality)
        try c.encode(stall, forKey: .stall)
        try c.encode(wifi, forKey: .wifi)
    }

    /// True when the two differ in what an event reports: every field, of `linkQuality`
    /// only its class or its presence (`LinkQuality.differsAsShown`), and of `wifi` only its
    /// presence, network, access point or bars (`WiFi.differsAsShown`), so new figures alone
    /// make no event; with `ignoringQuality`, not even the quality's class (a path's quality is
    /// `Status.linkQuality`'s to report).
    public func differs(from other: Interface, ignoringQuality: Bool = false) -> Bool {
        if !ignoringQuality && LinkQuality.differsAsShown(linkQuality, other.linkQuality) { return true }
        if WiFi.differsAsShown(wifi, other.wifi) { return true }
        // Every field but `linkQuality` and `wifi` (their shown parts are above), compared in
        // place: no copy of either interface.
        return name != other.name || index != other.index || kind != other.kind || up != other.up
            || carrier != other.carrier || operstate != other.operstate || metered != other.metered
            || connectivity != other.connectivity || addresses != other.addresses || dns != other.dns
            || searchDomains != other.searchDomains || nat64Prefix != other.nat64Prefix
            || captivePortalApi != other.captivePortalApi || stall != other.stall
    }

    /// `differs(from:)` over two lists, element by element; the quality of the interfaces
    /// `onPath` (by index) not counted.
    static func differ(_ a: [Interface], _ b: [Interface], onPath: (Int) -> Bool) -> Bool {
        guard a.count == b.count else { return true }
        for i in a.indices where a[i].differs(from: b[i], ignoringQuality: onPath(a[i].index)) { return true }
        return false
    }
}

/// The cellular radio behind a wwan interface, from ModemManager (varlink type `Cellular`).
public struct Cellular: Codable, Equatable, Hashable, Sendable {
    /// `2G`, `3G`, `4G`, `5G`, or nil when the technology is unknown.
    public var generation: String?
    /// ModemManager's name of the newest technology in use (`edge`, `lte`, `5gnr`, …).
    public var accessTechnology: String?
    /// The modem's D-Bus object path.
    public var modem: String
    public var interface: String?
    /// 0…100.
    public var signalQuality: Int?
    public var roaming: Bool?

    public init(generation: String?, accessTechnology: String?, modem: String, interface: String?,
                signalQuality: Int?, roaming: Bool?) {
        self.generation = generation; self.accessTechnology = accessTechnology; self.modem = modem
        self.interface = interface; self.signalQuality = signalQuality; self.roaming = roaming
    }

    enum CodingKeys: String, CodingKey { case generation, accessTechnology, modem, interface, signalQuality, roaming }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(generation, forKey: .generation); try c.encode(accessTechnology, forKey: .accessTechnology)
        try c.encode(modem, forKey: .modem); try c.encode(interface, forKey: .interface)
        try c.encode(signalQuality, forKey: .signalQuality); try c.encode(roaming, forKey: .roaming)
    }
}

/// The last connectivity check (varlink type `ConnectivityProbe`).
public struct Probe: Codable, Equatable, Hashable, Sendable {
    public var url: String
    public var result: Connectivity
    public var httpStatus: Int?
    public var rttMs: Double?
    /// Where a captive portal redirected to, or the login page its API names (`user-portal-url`).
    public var portalUrl: String?
    public var error: String?
    public var checkedAt: Date
    /// The venue's information page (RFC 8908 `venue-info-url`).
    public var venueInfoUrl: String?
    /// Seconds until the session ends and the portal captures again (`seconds-remaining`), as of `checkedAt`.
    public var secondsRemaining: Int?
    /// Bytes left in the session (`bytes-remaining`).
    public var bytesRemaining: Int?
    /// Whether the portal lets the session be extended (`can-extend-session`).
    public var canExtendSession: Bool?
    /// Where the portal facts come from: `ra` when a captive-portal API announced by a router
    /// advertisement answered; nil when only the HTTP check spoke.
    public var source: String?
    /// The step at which the check failed (`resolve`, `connect`, `tls`, `request`); nil when it
    /// got an answer (or could not run at all).
    public var failedStage: ProbeStage?
    /// The verdict of the IPv4 check; nil when IPv4 was not checked (no IPv4 path, or a check
    /// of one address).
    public var ipv4Result: Connectivity?
    /// The verdict of the IPv6 check; nil when IPv6 was not checked.
    public var ipv6Result: Connectivity?
    /// True when the IPv6 check's answer came from an address in the NAT64 well-known prefix
    /// (64:ff9b::/96): the resolver synthesized it (DNS64); nil otherwise.
    public var nat64: Bool?

    public init(url: String, result: Connectivity, httpStatus: Int? = nil, rttMs: Double? = nil,
                portalUrl: String? = nil, error: String? = nil, checkedAt: Date, venueInfoUrl: String? = nil,
                secondsRemaining: Int? = nil, bytesRemaining: Int? = nil, canExtendSession: Bool? = nil,
                source: String? = nil, failedStage: ProbeStage? = nil, ipv4Result: Connectivity? = nil,
                ipv6Result: Connectivity? = nil, nat64: Bool? = nil) {
        self.url = url; self.result = result; self.httpStatus = httpStatus; self.rttMs = rttMs
        self.portalUrl = portalUrl; self.error = error; self.checkedAt = checkedAt
        self.venueInfoUrl = venueInfoUrl; self.secondsRemaining = secondsRemaining
        self.bytesRemaining = bytesRemaining; self.canExtendSession = canExtendSession; self.source = source
        self.failedStage = failedStage; self.ipv4Result = ipv4Result; self.ipv6Result = ipv6Result
        self.nat64 = nat64
    }

    enum CodingKeys: String, CodingKey {
        case url, result, httpStatus, rttMs, portalUrl, error, checkedAt, venueInfoUrl, secondsRemaining,
             bytesRemaining, canExtendSession, source, failedStage, ipv4Result, ipv6Result, nat64
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decode(String.self, forKey: .url)
        result = try c.decode(Connectivity.self, forKey: .result)
        httpStatus = try c.decodeIfPresent(Int.self, forKey: .httpStatus)
        rttMs = try c.decodeIfPresent(Double.self, forKey: .rttMs)
        portalUrl = try c.decodeIfPresent(String.self, forKey: .portalUrl)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        checkedAt = try c.decodeTimestamp(forKey: .checkedAt)
        venueInfoUrl = try c.decodeIfPresent(String.self, forKey: .venueInfoUrl)
        secondsRemaining = try c.decodeIfPresent(Int.self, forKey: .secondsRemaining)
        bytesRemaining = try c.decodeIfPresent(Int.self, forKey: .bytesRemaining)
        canExtendSession = try c.decodeIfPresent(Bool.self, forKey: .canExtendSession)
        source = try c.decodeIfPresent(String.self, forKey: .source)
        // A daemon from before per-family checks sends none of these.
        failedStage = try c.decodeIfPresent(ProbeStage.self, forKey: .failedStage)
        ipv4Result = try c.decodeIfPresent(Connectivity.self, forKey: .ipv4Result)
        ipv6Result = try c.decodeIfPresent(Connectivity.self, forKey: .ipv6Result)
        nat64 = try c.decodeIfPresent(Bool.self, forKey: .nat64)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(url, forKey: .url); try c.encode(result, forKey: .result)
        try c.encode(httpStatus, forKey: .httpStatus); try c.encode(rttMs, forKey: .rttMs)
        try c.encode(portalUrl, forKey: .portalUrl); try c.encode(error, forKey: .error)
        try c.encode(Timestamp.string(from: checkedAt), forKey: .checkedAt)
        try c.encode(venueInfoUrl, forKey: .venueInfoUrl); try c.encode(secondsRemaining, forKey: .secondsRemaining)
        try c.encode(bytesRemaining, forKey: .bytesRemaining); try c.encode(canExtendSession, forKey: .canExtendSession)
        try c.encode(source, forKey: .source); try c.encode(failedStage, forKey: .failedStage)
        try c.encode(ipv4Result, forKey: .ipv4Result); try c.encode(ipv6Result, forKey: .ipv6Result)
        try c.encode(nat64, forKey: .nat64)
    }

    /// The probe with what changes on every check (time, RTT, what is left of a session)
    /// blanked, for change detection: a re-check with the same verdict is not an event.
    public var comparable: Probe {
        Probe(url: url, result: result, httpStatus: httpStatus, rttMs: nil, portalUrl: portalUrl,
              error: error, checkedAt: Date(timeIntervalSince1970: 0), venueInfoUrl: venueInfoUrl,
              canExtendSession: canExtendSession, source: source, failedStage: failedStage, ipv4Result: ipv4Result,
              ipv6Result: ipv6Result, nat64: nat64)
    }
}

/// The machine's reachability (varlink type `Status`); `reachctl status --json` prints exactly this.
///
/// A value type whose fields live in one shared, copy-on-write box: the daemon hands a status
/// from the classifier to the tracker, the overlay, the server and the history, and each of
/// those copies is one reference count instead of some twenty (every string and array inside),
/// and two statuses that are copies of each other compare equal without looking at a field.
public struct Status: Codable, Equatable, Sendable {
    /// The fields, stored together.
    struct Fields: Equatable, Sendable {
        var status: NetworkStatus
        var reachable: Bool
        var connectivity: Connectivity
        var ipv4Connectivity: Connectivity
        var ipv6Connectivity: Connectivity
        var primary: Interface?
        var vpn: Interface?
        var cellular: Cellular?
        var expensive: Bool
        var constrained: Bool
        var ipv4: Bool
        var ipv6: Bool
        var gateways: [String]
        var gatewaysOmitted: Int
        var flags: [ReachabilityFlag]
        var interfaces: [Interface]
        var probe: Probe?
        var since: Date
        var simulated: Bool
        var routing: [RoutePath]
        var connectivityCheck: Bool
        var linkQuality: LinkQuality?
    }

    /// Never written while another `Status` shares it (see `fieldsForWriting`), which is what
    /// makes handing it across threads safe.
    private final class Box: @unchecked Sendable {
        // Written only through `fieldsForWriting`, while no other value holds the box: no two
        // accesses can overlap, so the runtime's check of each (a call per field read) is off.
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    /// The box's fields, copied into a box of this value's own first if another value shares it.
    private var fieldsForWriting: Fields {
        get { box.fields }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
            yield &box.fields
        }
    }

    public var status: NetworkStatus {
        _read { yield box.fields.status } _modify { yield &fieldsForWriting.status }
    }
    public var reachable: Bool {
        _read { yield box.fields.reachable } _modify { yield &fieldsForWriting.reachable }
    }
    public var connectivity: Connectivity {
        _read { yield box.fields.connectivity } _modify { yield &fieldsForWriting.connectivity }
    }
    /// The verdict on the IPv4 internet alone: its own check over the IPv4 path; `none` without
    /// an IPv4 path. `connectivity` is the better of the two families.
    public var ipv4Connectivity: Connectivity {
        _read { yield box.fields.ipv4Connectivity } _modify { yield &fieldsForWriting.ipv4Connectivity }
    }
    /// The verdict on the IPv6 internet alone (see `ipv4Connectivity`).
    public var ipv6Connectivity: Connectivity {
        _read { yield box.fields.ipv6Connectivity } _modify { yield &fieldsForWriting.ipv6Connectivity }
    }
    /// The interface carrying the lowest-metric usable default route (beneath any VPN).
    public var primary: Interface? {
        _read { yield box.fields.primary } _modify { yield &fieldsForWriting.primary }
    }
    /// A VPN carrying traffic on top of `primary`.
    public var vpn: Interface? {
        _read { yield box.fields.vpn } _modify { yield &fieldsForWriting.vpn }
    }
    public var cellular: Cellular? {
        _read { yield box.fields.cellular } _modify { yield &fieldsForWriting.cellular }
    }
    /// Cellular, or a metered primary interface: `Metered=`, or its DHCP lease's
    /// `ANDROID_METERED` or NetworkManager's guess unless `NotMetered=` names it.
    public var expensive: Bool {
        _read { yield box.fields.expensive } _modify { yield &fieldsForWriting.expensive }
    }
    /// The primary interface is in "low data mode" (`[Interfaces] Constrained=`): apps should
    /// save data, as Apple's `NWPath.isConstrained` asks them to.
    public var constrained: Bool {
        _read { yield box.fields.constrained } _modify { yield &fieldsForWriting.constrained }
    }
    public var ipv4: Bool {
        _read { yield box.fields.ipv4 } _modify { yield &fieldsForWriting.ipv4 }
    }
    public var ipv6: Bool {
        _read { yield box.fields.ipv6 } _modify { yield &fieldsForWriting.ipv6 }
    }
    /// The routers of the primary's routes on the path: IPv4 before IPv6, each family in
    /// address order, at most `maximumGateways` (`gatewaysOmitted` counts the rest).
    public var gateways: [String] {
        _read { yield box.fields.gateways } _modify { yield &fieldsForWriting.gateways }
    }
    /// How many more routers there are than `gateways` lists. Anyone on a link can announce a
    /// router (each a default route of its own), so the list is bounded.
    public var gatewaysOmitted: Int {
        _read { yield box.fields.gatewaysOmitted } _modify { yield &fieldsForWriting.gatewaysOmitted }
    }
    /// The most routers `gateways` lists.
    public static let maximumGateways = 8
    public var flags: [ReachabilityFlag] {
        _read { yield box.fields.flags } _modify { yield &fieldsForWriting.flags }
    }
    public var interfaces: [Interface] {
        _read { yield box.fields.interfaces } _modify { yield &fieldsForWriting.interfaces }
    }
    public var probe: Probe? {
        _read { yield box.fields.probe } _modify { yield &fieldsForWriting.probe }
    }
    /// When this status began.
    public var since: Date {
        _read { yield box.fields.since } _modify { yield &fieldsForWriting.since }
    }
    /// True while a simulation (`Simulate`) is in effect: the status is what a developer asked
    /// reachd to play, not what the network is.
    public var simulated: Bool {
        _read { yield box.fields.simulated } _modify { yield &fieldsForWriting.simulated }
    }
    /// How the kernel routes an app's connection to the internet, per family (IPv4 first): the
    /// rule and table that decided, and the route or what blocked the way.
    public var routing: [RoutePath] {
        _read { yield box.fields.routing } _modify { yield &fieldsForWriting.routing }
    }
    /// False when the connectivity check is off (`[Connectivity] Enabled=no`): `connectivity`
    /// then stays `unknown` for good rather than until a check answers, and a reachable path
    /// counts as online (`reachctl wait --internet`, `reachd-internet.target`), as
    /// NetworkManager does with its check off.
    public var connectivityCheck: Bool {
        _read { yield box.fields.connectivityCheck } _modify { yield &fieldsForWriting.connectivityCheck }
    }
    /// How good the path apps' traffic takes is, measured: the VPN's `Interface.linkQuality`
    /// when a VPN carries the path and its quality is known, else the primary's; nil before
    /// anything is known and when not reachable. Its change of class is an event of its own
    /// (`changes: ["linkQuality"]`): the path's interfaces in `primary`, `vpn` and
    /// `interfaces` carry the same figures without counting them again.
    public var linkQuality: LinkQuality? {
        _read { yield box.fields.linkQuality } _modify { yield &fieldsForWriting.linkQuality }
    }

    public init(status: NetworkStatus, reachable: Bool, connectivity: Connectivity, primary: Interface?,
                vpn: Interface?, cellular: Cellular?, expensive: Bool, ipv4: Bool, ipv6: Bool,
                gateways: [String], flags: [ReachabilityFlag], interfaces: [Interface], probe: Probe?,
                since: Date, simulated: Bool = false, routing: [RoutePath] = [],
                ipv4Connectivity: Connectivity = .none, ipv6Connectivity: Connectivity = .none,
                gatewaysOmitted: Int = 0, connectivityCheck: Bool = true, linkQuality: LinkQuality? = nil,
                constrained: Bool = false) {
        box = Box(Fields(status: status, reachable: reachable, connectivity: connectivity,
                         ipv4Connectivity: ipv4Connectivity, ipv6Connectivity: ipv6Connectivity, primary: primary,
                         vpn: vpn, cellular: cellular, expensive: expensive, constrained: constrained, ipv4: ipv4, ipv6: ipv6,
                         gateways: gateways, gatewaysOmitted: gatewaysOmitted, flags: flags, interfaces: interfaces, probe: probe,
                         since: since, simulated: simulated, routing: routing, connectivityCheck: connectivityCheck,
                         linkQuality: linkQuality))
    }

    /// Equal fields; a copy of the same value is equal at once.
    public static func == (a: Status, b: Status) -> Bool {
        a.box === b.box || a.box.fields == b.box.fields
    }

    /// True when `other` is a copy of this very value (no field written since): a check that
    /// costs nothing and implies `==`, for callers that can fall back when it is false.
    public func isCopy(of other: Status) -> Bool { box === other.box }

    /// Nothing known yet: not reachable, no interfaces.
    public static func initial(since: Date) -> Status {
        Status(status: .notReachable, reachable: false, connectivity: .none, primary: nil, vpn: nil,
               cellular: nil, expensive: false, ipv4: false, ipv6: false, gateways: [], flags: [],
               interfaces: [], probe: nil, since: since)
    }

    /// The top-level fields an event reports in `changes` (`since` is never one of them).
    public enum Field: String, CaseIterable, Comparable, Sendable {
        case status, reachable, connectivity, ipv4Connectivity, ipv6Connectivity, primary, vpn, cellular, expensive,
             ipv4, ipv6, gateways, gatewaysOmitted, flags, interfaces, probe, simulated, routing, connectivityCheck,
             linkQuality, constrained

        public static func < (a: Field, b: Field) -> Bool { a.rawValue < b.rawValue }

        /// Every field, sorted by name, as `changes(from:)` lists them: sorted once, not per event.
        package static let byName: [Field] = allCases.sorted()
    }

    /// The fields of `Subscribe(statusOnly: true)`.
    public static let essentialFields: Set<Field> = [.status, .connectivity, .primary]

    /// The fields whose values differ from `previous`, sorted by name: an event's `changes`.
    /// `since` never counts. `probe` counts only when its verdict (`result`) or `portalUrl`
    /// changed: error text, RTT, HTTP status and times make no event. A null probe stands for a
    /// verdict equal to its status's `connectivity` (not checked yet, or checks disabled), so a
    /// check that confirms what the status already says is no change either. `linkQuality` counts
    /// only when its `level` or `effectiveType` changed, or it appeared or went (RTT, samples
    /// and times make no event); a standby's quality so counts in `interfaces`, the path's
    /// interfaces' only in `linkQuality`.
    public func changes(from previous: Status) -> [Field] {
        if isCopy(of: previous) { return [] }
        var changes: [Field] = []
        changes.reserveCapacity(Field.byName.count)
        for field in Field.byName where differs(in: field, from: previous) { changes.append(field) }
        return changes
    }

    /// True when `field` differs from `other` by the rules of `changes(from:)`.
    public func differs(in field: Field, from other: Status) -> Bool {
        // Read from the boxes in place (a load each), not through the accessors' coroutines.
        let a = box, b = other.box
        switch field {
        case .status: return a.fields.status != b.fields.status
        case .reachable: return a.fields.reachable != b.fields.reachable
        case .connectivity: return a.fields.connectivity != b.fields.connectivity
        case .ipv4Connectivity: return a.fields.ipv4Connectivity != b.fields.ipv4Connectivity
        case .ipv6Connectivity: return a.fields.ipv6Connectivity != b.fields.ipv6Connectivity
        // The path's quality is `linkQuality`: a subscriber to `primary` hears of a new primary,
        // not of its link getting slower.
        case .primary: return Self.differInterface(a.fields.primary, b.fields.primary)
        case .vpn: return Self.differInterface(a.fields.vpn, b.fields.vpn)
        case .cellular: return Self.differ(a.fields.cellular, b.fields.cellular)
        case .expensive: return a.fields.expensive != b.fields.expensive
        case .constrained: return a.fields.constrained != b.fields.constrained
        case .ipv4: return a.fields.ipv4 != b.fields.ipv4
        case .ipv6: return a.fields.ipv6 != b.fields.ipv6
        case .gateways: return a.fields.gateways != b.fields.gateways
        case .gatewaysOmitted: return a.fields.gatewaysOmitted != b.fields.gatewaysOmitted
        case .flags: return a.fields.flags != b.fields.flags
        case .interfaces:
            // A standby's quality is reported here; the path's (of either status) in `linkQuality`.
            let path = (a.fields.primary?.index, a.fields.vpn?.index, b.fields.primary?.index, b.fields.vpn?.index)
            return Interface.differ(a.fields.interfaces, b.fields.interfaces) {
                $0 == path.0 || $0 == path.1 || $0 == path.2 || $0 == path.3
            }
        case .simulated: return a.fields.simulated != b.fields.simulated
        case .routing: return a.fields.routing != b.fields.routing
        case .connectivityCheck: return a.fields.connectivityCheck != b.fields.connectivityCheck
        case .linkQuality: return LinkQuality.differsAsShown(a.fields.linkQuality, b.fields.linkQuality)
        case .probe:
            // Only the verdicts are taken out (enums, no copies), the portal URLs only when those agree.
            let verdict = a.fields.probe?.result, otherVerdict = b.fields.probe?.result
            if verdict == nil && otherVerdict == nil { return false }
            if verdict ?? a.fields.connectivity != otherVerdict ?? b.fields.connectivity { return true }
            return a.fields.probe?.portalUrl != b.fields.probe?.portalUrl
        }
    }

    /// `a != b`, with absent values told apart before anything is copied: `Optional`'s own
    /// comparison copies both sides into a pair first, strings and all, even when both are nil.
    @inline(__always)
    private static func differ<T: Equatable>(_ a: T?, _ b: T?) -> Bool {
        guard let a, let b else { return (a == nil) != (b == nil) }
        return a != b
    }

    /// `differ`, for the path's interfaces: their quality does not count (see `linkQuality`).
    @inline(__always)
    private static func differInterface(_ a: Interface?, _ b: Interface?) -> Bool {
        guard let a, let b else { return (a == nil) != (b == nil) }
        return a.differs(from: b, ignoringQuality: true)
    }

    /// True when the two differ in a field an event reports (see `changes(from:)`).
    public func differs(from other: Status) -> Bool {
        !isCopy(of: other) && Field.byName.contains { differs(in: $0, from: other) }
    }

    /// Whether connectivity and probe agree with reachability: a reachable status is never
    /// `none`, an unreachable one always is, and a probe's verdict is the status's. Every status
    /// reachd publishes holds this; `ConnectivityRule` makes it so.
    public var isConsistent: Bool {
        if reachable == (connectivity == .none) { return false }
        if let probe, probe.result != connectivity { return false }
        return true
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case status, reachable, connectivity, ipv4Connectivity, ipv6Connectivity, primary, vpn, cellular, expensive,
             ipv4, ipv6, gateways, gatewaysOmitted, flags, interfaces, probe, since, simulated, routing, connectivityCheck,
             linkQuality, constrained
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // Unknown flag names from a newer daemon are skipped rather than failing the whole status.
        let flagNames = try c.decode([String].self, forKey: .flags)
        self.init(status: try c.decode(NetworkStatus.self, forKey: .status),
                  reachable: try c.decode(Bool.self, forKey: .reachable),
                  connectivity: try c.decode(Connectivity.self, forKey: .connectivity),
                  primary: try c.decodeIfPresent(Interface.self, forKey: .primary),
                  vpn: try c.decodeIfPresent(Interface.self, forKey: .vpn),
                  cellular: try c.decodeIfPresent(Cellular.self, forKey: .cellular),
                  expensive: try c.decode(Bool.self, forKey: .expensive),
                  ipv4: try c.decode(Bool.self, forKey: .ipv4),
                  ipv6: try c.decode(Bool.self, forKey: .ipv6),
                  gateways: try c.decode([String].self, forKey: .gateways),
                  flags: flagNames.compactMap(ReachabilityFlag.init(rawValue:)),
                  interfaces: try c.decode([Interface].self, forKey: .interfaces),
                  probe: try c.decodeIfPresent(Probe.self, forKey: .probe),
                  since: try c.decodeTimestamp(forKey: .since),
                  // A daemon from before simulations existed never simulates.
                  simulated: try c.decodeIfPresent(Bool.self, forKey: .simulated) ?? false,
                  // Nor told how it routes.
                  routing: try c.decodeIfPresent([RoutePath].self, forKey: .routing) ?? [],
                  // A daemon from before per-family checks: its one verdict stands for each family with a path.
                  ipv4Connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .ipv4Connectivity)
                      ?? (try c.decode(Bool.self, forKey: .ipv4) ? c.decode(Connectivity.self, forKey: .connectivity) : .none),
                  ipv6Connectivity: try c.decodeIfPresent(Connectivity.self, forKey: .ipv6Connectivity)
                      ?? (try c.decode(Bool.self, forKey: .ipv6) ? c.decode(Connectivity.self, forKey: .connectivity) : .none),
                  // A daemon from before the bound listed every router.
                  gatewaysOmitted: try c.decodeIfPresent(Int.self, forKey: .gatewaysOmitted) ?? 0,
                  // A daemon that does not say (null, or from before the field) checks.
                  connectivityCheck: try c.decodeIfPresent(Bool.self, forKey: .connectivityCheck) ?? true,
                  // A daemon from before link quality was measured says nothing of it.
                  linkQuality: try c.decodeIfPresent(LinkQuality.self, forKey: .linkQuality),
                  // Nor of low data mode.
                  constrained: try c.decodeIfPresent(Bool.self, forKey: .constrained) ?? false)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(status, forKey: .status); try c.encode(reachable, forKey: .reachable)
        try c.encode(connectivity, forKey: .connectivity)
        try c.encode(ipv4Connectivity, forKey: .ipv4Connectivity); try c.encode(ipv6Connectivity, forKey: .ipv6Connectivity)
        try c.encode(primary, forKey: .primary)
        try c.encode(vpn, forKey: .vpn); try c.encode(cellular, forKey: .cellular)
        try c.encode(expensive, forKey: .expensive); try c.encode(ipv4, forKey: .ipv4)
        try c.encode(ipv6, forKey: .ipv6); try c.encode(gateways, forKey: .gateways)
        try c.encode(gatewaysOmitted, forKey: .gatewaysOmitted)
        try c.encode(flags, forKey: .flags); try c.encode(interfaces, forKey: .interfaces)
        try c.encode(probe, forKey: .probe); try c.encode(Timestamp.string(from: since), forKey: .since)
        try c.encode(simulated, forKey: .simulated); try c.encode(routing, forKey: .routing)
        try c.encode(connectivityCheck, forKey: .connectivityCheck)
        try c.encode(linkQuality, forKey: .linkQuality)
        try c.encode(constrained, forKey: .constrained)
    }
}
