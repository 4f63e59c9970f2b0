/// Which sockets of a sock_diag dump are read, so that a dump costs the same whatever other
/// users open: at most `limit` a dump, shared fairly between the owners (`uid`) when there are
/// more.
///
/// Each owner's sockets are thinned on their own, to 1 in 2^k chosen by a hash of the cookie:
/// the same sockets from one dump to the next (their counters need the previous dump's), spread
/// evenly over the socket table, and a subset of the earlier choice when k grows. The k of each
/// owner comes from how many sockets they had in the previous dump: owners below the fair share
/// keep every socket, the others are thinned to it (water-filling `budget` = 3/4 of `limit`,
/// leaving room for growth). One user opening 60,000 sockets thins only their own; an app's few
/// are all read. An owner new since the previous dump is read in full; `limit` is a hard stop
/// when that overflows it (the rest of that dump is not read, and the next dump knows the
/// owner).
///
/// Use: `admits(uid:cookie:)` for each socket as the dump streams in, then `PassiveSampleBook`
/// asks `readBefore(uid:cookie:)` whether an unknown socket is new or was only passed over, then
/// `finish()` (a complete dump) or `abandon()` (one that failed). Pure: no I/O.
public struct SockDiagSelection: Sendable {
    /// The most sockets read in one dump.
    public static let defaultLimit = 16_384

    public let limit: Int
    /// What the thinning aims at: below `limit`, so that the hard stop is reached only by a
    /// sudden crowd.
    public var budget: Int { max(1, limit / 4 * 3) }

    /// The rule of this dump: the k of each owner that is thinned (1 in 2^k read).
    public private(set) var shifts: [UInt32: UInt8] = [:]
    /// The rule of the previous complete dump, nil when there was none or it stopped at `limit`
    /// (then no unknown socket can be told from a new one).
    private var previousShifts: [UInt32: UInt8]?
    /// This dump's sockets by owner, read or not.
    private var counts: [UInt32: Int] = [:]
    /// Sockets this dump offered so far.
    public private(set) var seen = 0
    /// Sockets this dump read so far.
    public private(set) var admitted = 0
    /// This dump reached `limit`: sockets past it were not read.
    public private(set) var truncated = false

    public init(limit: Int = SockDiagSelection.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// Whether to read the socket with this owner and cookie; counts it either way.
    public mutating func admits(uid: UInt32, cookie: UInt64) -> Bool {
        seen += 1
        counts[uid, default: 0] += 1
        if let shift = shifts[uid], !Self.chosen(cookie: cookie, shift: shift) { return false }
        guard admitted < limit else {
            truncated = true
            return false
        }
        admitted += 1
        return true
    }

    /// Whether the previous complete dump read this socket, had it been there: false when a
    /// socket the book does not know may have been passed over rather than new.
    public func readBefore(uid: UInt32, cookie: UInt64) -> Bool {
        guard let previousShifts else { return false }
        return previousShifts[uid].map { Self.chosen(cookie: cookie, shift: $0) } ?? true
    }

    /// The dump was read to its end: the next one's rule comes from its counts.
    public mutating func finish() {
        previousShifts = truncated ? nil : shifts
        shifts = Self.shifts(for: counts, budget: budget)
        reset()
    }

    /// The dump failed part way: its counts are dropped, the rules stay (the book did not see it).
    public mutating func abandon() {
        reset()
    }

    /// Starts afresh: every socket read until a dump has been counted (after `stop`).
    public mutating func forget() {
        shifts = [:]
        previousShifts = nil
        reset()
    }

    private mutating func reset() {
        // A crowd of owners is not kept: the next dump counts them again.
        if counts.capacity > 256 { counts = [:] } else { counts.removeAll(keepingCapacity: true) }
        seen = 0
        admitted = 0
        truncated = false
    }

    /// The thinning that brings `counts` (sockets by owner) within `budget`: owners above the
    /// level L where Σ min(count, L) = budget are read 1 in 2^k, the least k with count ≤ L · 2^k.
    public static func shifts(for counts: [UInt32: Int], budget: Int) -> [UInt32: UInt8] {
        var total = 0
        for count in counts.values { total += count }
        guard total > budget else { return [:] }
        let ascending = counts.values.sorted()
        var remaining = budget, owners = ascending.count, level = 1
        for count in ascending {
            // Everyone from here on has at least `count`: if they all fit at that, keep it whole.
            if count * owners <= remaining {
                remaining -= count
                owners -= 1
            } else {
                level = max(1, remaining / owners)
                break
            }
        }
        var shifts: [UInt32: UInt8] = [:]
        for (uid, count) in counts where count > level {
            var shift: UInt8 = 0
            while count > level << Int(shift) && shift < 62 { shift += 1 }
            shifts[uid] = shift
        }
        return shifts
    }

    /// The cookie's hash has its low `shift` bits clear: 1 in 2^shift, and every socket chosen
    /// at k+1 is also chosen at k.
    static func chosen(cookie: UInt64, shift: UInt8) -> Bool {
        shift == 0 || mixed(cookie) & ((1 << UInt64(shift)) - 1) == 0
    }

    /// SplitMix64's finalizer: cookies are consecutive numbers; their hashes are spread.
    static func mixed(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
