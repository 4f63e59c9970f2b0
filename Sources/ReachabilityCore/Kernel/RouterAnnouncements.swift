/// What the routers of one interface announced and is still valid: DNS servers, search domains,
/// NAT64 prefixes and the captive-portal API URI, each with the deadline its lifetime gives.
///
/// Pure: times are seconds of the monitor's monotonic clock, handed in. An option with
/// lifetime 0 withdraws what it names; `expire(now:)` drops what ran out, and
/// `nextDeadline` tells the monitor when to call it. The lists are bounded (a host on the link
/// can send any number of advertisements): a new entry beyond the bound replaces the oldest.
///
/// The captive-portal URI has no lifetime of its own (RFC 8910), but anyone on the link can
/// announce one, so it ages with the advertisements of the router that sent it: it is gone when
/// an advertisement of that router comes without it, or `captivePortalLifetime` after that
/// router last announced it. The kernel hands on one option per message, so an advertisement's
/// options are told apart from the next one's by time (`advertisementGap`) or by an option that
/// comes again (docs/captive-portal.md).
public struct RouterAnnouncements: Equatable, Hashable, Sendable {
    /// One announced value and when it runs out (nil: never).
    struct Entry: Equatable, Hashable, Sendable {
        var value: String
        var deadline: Double?
    }

    private var servers: [Entry] = []
    private var domains: [Entry] = []
    /// Newest last: the newest valid prefix is the one in use.
    private var prefixes: [Entry] = []
    /// The RFC 8910 API URI, the router that announced it, and when it runs out.
    struct Portal: Equatable, Hashable, Sendable {
        var uri: String
        var router: String?
        var deadline: Double
    }

    /// What one router's latest advertisement carried so far (its options arrive one by one).
    struct Advertisement: Equatable, Hashable, Sendable {
        var router: String
        var lastOptionAt: Double
        var contents: Set<RouterOption.Content>
        var carriedPortal: Bool
    }

    /// How long a captive-portal URI lasts without being announced again, in seconds: the
    /// default router lifetime of RFC 4861 (three times the longest interval between a router's
    /// advertisements), so a lost advertisement or two does not drop it.
    public static let captivePortalLifetime: Double = 1800
    /// Options of one router that arrive further apart than this (seconds) belong to different
    /// advertisements: the kernel hands on one advertisement's options within microseconds, and
    /// a router sends at most one multicast advertisement every 3 s (RFC 4861).
    public static let advertisementGap: Double = 0.5
    /// The routers followed per interface; a new one beyond replaces the one heard from longest ago.
    static let maxRouters = 8
    /// Options remembered per advertisement to tell the next one by (an advertisement carries a few).
    static let maxContents = 32

    private var portal: Portal?
    private var advertisements: [Advertisement] = []

    /// The RFC 8910 API URI; never `RouterOption.unrestricted` (that clears it).
    public var captivePortal: String? { portal?.uri }
    /// How many routers' advertisements are followed (bounded by `maxRouters`).
    var followedRouters: Int { advertisements.count }

    public init() {}

    /// Recursive DNS servers, in the order first announced.
    public var dnsServers: [String] { servers.map(\.value) }
    /// The DNS search list, in the order first announced.
    public var searchDomains: [String] { domains.map(\.value) }
    /// The NAT64 prefix most recently announced and still valid (`64:ff9b::/96`).
    public var nat64Prefix: String? { prefixes.last?.value }

    /// Nothing is held (what is known of the routers' advertisements alone counts as nothing).
    public var isEmpty: Bool { servers.isEmpty && domains.isEmpty && prefixes.isEmpty && portal == nil }

    /// Applies one option received at `option.receivedAt`; true when anything changed that a
    /// status shows (a refreshed lifetime alone is no change).
    @discardableResult
    public mutating func apply(_ option: RouterOption) -> Bool {
        let before = self.shown
        let withdraw = option.lifetime == 0
        follow(option)
        switch option.content {
        case .captivePortal(let uri):
            portal = uri == RouterOption.unrestricted
                ? nil
                : Portal(uri: uri, router: option.router, deadline: option.receivedAt + Self.captivePortalLifetime)
        case .dnsServers(let list):
            Self.merge(list, deadline: option.deadline, withdraw: withdraw, into: &servers, bound: RouterOptionParser.maxServers, newestLast: false)
        case .searchDomains(let list):
            Self.merge(list, deadline: option.deadline, withdraw: withdraw, into: &domains, bound: RouterOptionParser.maxDomains, newestLast: false)
        case .nat64Prefix(let prefix):
            Self.merge([prefix], deadline: option.deadline, withdraw: withdraw, into: &prefixes, bound: 4, newestLast: true)
        }
        return shown != before
    }

    /// The router at `address` is no default router any more (its router lifetime ran out, or it
    /// announced 0: the kernel removed the default route via it): the URI it announced goes
    /// with it. True when that changed what a status shows.
    @discardableResult
    public mutating func routerGone(_ address: String) -> Bool {
        advertisements.removeAll { $0.router == address }
        guard let portal, portal.router == address else { return false }
        self.portal = nil
        return true
    }

    /// Drops what ran out by `now`; true when anything went.
    @discardableResult
    public mutating func expire(now: Double) -> Bool {
        let before = (servers.count, domains.count, prefixes.count, portal)
        servers.removeAll { $0.deadline.map { $0 <= now } ?? false }
        domains.removeAll { $0.deadline.map { $0 <= now } ?? false }
        prefixes.removeAll { $0.deadline.map { $0 <= now } ?? false }
        if let deadline = portalDeadline, deadline <= now { portal = nil }
        return before != (servers.count, domains.count, prefixes.count, portal)
    }

    /// The earliest deadline of anything held; nil when nothing runs out.
    public var nextDeadline: Double? {
        ((servers + domains + prefixes).compactMap(\.deadline) + [portalDeadline].compactMap { $0 }).min()
    }

    /// When the URI goes: its lifetime's end, or sooner, once the latest advertisement of the
    /// router that announced it has come without it (`advertisementGap` after its last option).
    private var portalDeadline: Double? {
        guard let portal else { return nil }
        guard let router = portal.router, let latest = advertisements.first(where: { $0.router == router }),
              !latest.carriedPortal else { return portal.deadline }
        return min(portal.deadline, latest.lastOptionAt + Self.advertisementGap)
    }

    /// Follows the advertisement `option` came in: a new one of its router begins after the gap
    /// or when an option comes again; one that ended without the URI its router announced ends
    /// the URI.
    private mutating func follow(_ option: RouterOption) {
        guard let router = option.router else { return }
        let now = option.receivedAt
        guard let position = advertisements.firstIndex(where: { $0.router == router }) else {
            if advertisements.count >= Self.maxRouters,
               let oldest = advertisements.indices.min(by: { advertisements[$0].lastOptionAt < advertisements[$1].lastOptionAt }) {
                advertisements.remove(at: oldest)
            }
            advertisements.append(Advertisement(router: router, lastOptionAt: now, contents: [option.content],
                                                carriedPortal: option.isCaptivePortal))
            return
        }
        var latest = advertisements[position]
        if now - latest.lastOptionAt > Self.advertisementGap || latest.contents.contains(option.content) {
            if !latest.carriedPortal, portal?.router == router { portal = nil }
            latest.contents = []
            latest.carriedPortal = false
        }
        if latest.contents.count < Self.maxContents { latest.contents.insert(option.content) }
        latest.carriedPortal = latest.carriedPortal || option.isCaptivePortal
        latest.lastOptionAt = max(latest.lastOptionAt, now)
        advertisements[position] = latest
    }

    /// What a status shows, for change detection.
    private var shown: [String?] {
        dnsServers + ["|"] + searchDomains + ["|", nat64Prefix, captivePortal]
    }

    private static func merge(_ values: [String], deadline: Double?, withdraw: Bool, into entries: inout [Entry],
                              bound: Int, newestLast: Bool) {
        for value in values {
            let existing = entries.firstIndex { $0.value == value }
            if withdraw {
                if let existing { entries.remove(at: existing) }
                continue
            }
            if let existing {
                entries[existing].deadline = deadline
                if newestLast { entries.append(entries.remove(at: existing)) }
                continue
            }
            if entries.count >= bound { entries.removeFirst() }
            entries.append(Entry(value: value, deadline: deadline))
        }
    }
}
