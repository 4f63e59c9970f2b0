/// What the routers of one interface announced and is still valid: DNS servers, search domains,
/// NAT64 prefixes and the captive-portal API URI, each with the deadline its lifetime gives.
///
/// Pure: times are seconds of the monitor's monotonic clock, handed in. An option with
/// lifetime 0 withdraws what it names; `expire(now:)` drops what ran out, and
/// `nextDeadline` tells the monitor when to call it. The lists are bounded (a host on the link
/// can send any number of advertisements): a new entry beyond the bound replaces the oldest.
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
    /// The RFC 8910 API URI; never `RouterOption.unrestricted` (that clears it).
    public private(set) var captivePortal: String?

    public init() {}

    /// Recursive DNS servers, in the order first announced.
    public var dnsServers: [String] { servers.map(\.value) }
    /// The DNS search list, in the order first announced.
    public var searchDomains: [String] { domains.map(\.value) }
    /// The NAT64 prefix most recently announced and still valid (`64:ff9b::/96`).
    public var nat64Prefix: String? { prefixes.last?.value }

    public var isEmpty: Bool { servers.isEmpty && domains.isEmpty && prefixes.isEmpty && captivePortal == nil }

    /// Applies one option received at `option.receivedAt`; true when anything changed that a
    /// status shows (a refreshed lifetime alone is no change).
    @discardableResult
    public mutating func apply(_ option: RouterOption) -> Bool {
        let before = self.shown
        let withdraw = option.lifetime == 0
        switch option.content {
        case .captivePortal(let uri):
            captivePortal = uri == RouterOption.unrestricted ? nil : uri
        case .dnsServers(let list):
            Self.merge(list, deadline: option.deadline, withdraw: withdraw, into: &servers, bound: RouterOptionParser.maxServers, newestLast: false)
        case .searchDomains(let list):
            Self.merge(list, deadline: option.deadline, withdraw: withdraw, into: &domains, bound: RouterOptionParser.maxDomains, newestLast: false)
        case .nat64Prefix(let prefix):
            Self.merge([prefix], deadline: option.deadline, withdraw: withdraw, into: &prefixes, bound: 4, newestLast: true)
        }
        return shown != before
    }

    /// Drops what ran out by `now`; true when anything went.
    @discardableResult
    public mutating func expire(now: Double) -> Bool {
        let before = (servers.count, domains.count, prefixes.count)
        servers.removeAll { $0.deadline.map { $0 <= now } ?? false }
        domains.removeAll { $0.deadline.map { $0 <= now } ?? false }
        prefixes.removeAll { $0.deadline.map { $0 <= now } ?? false }
        return before != (servers.count, domains.count, prefixes.count)
    }

    /// The earliest deadline of anything held; nil when nothing runs out.
    public var nextDeadline: Double? {
        (servers + domains + prefixes).compactMap(\.deadline).min()
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
