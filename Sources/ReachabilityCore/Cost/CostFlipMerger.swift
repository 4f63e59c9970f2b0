/// Merges flips of a link's metered guess (its DHCP lease's `ANDROID_METERED`, NetworkManager's
/// `Metered`) so that whoever can rewrite a lease or talk on the bus cannot make every app on
/// the machine re-plan its downloads in a loop: a state machine, keyed by interface index, whose
/// event methods return what the monitor does.
///
/// - At most one `costChanged` per link per `interval` (1 s): a flip after a quiet interval is
///   shown at once; flips within the interval after one are held, and at its end the newest
///   wins — with no event at all when it is what subscribers last saw.
/// - The flips themselves are logged at most once per `logInterval` (1 min) per link, the
///   next line counting those held back; the first word on a link is always logged.
///
/// The guess the classifier uses for a link is `shown(index)` while the link has an entry here,
/// so a held flip cannot slip out with an unrelated event either.
public struct CostFlipMerger: Sendable {
    public enum Action: Equatable, Sendable {
        /// Show `metered` as link `index`'s guess now: re-classify it with reason `costChanged`
        /// and `detail` (the newest flip's).
        case show(index: Int, metered: Bool, detail: String)
        /// Call `intervalEnded(index:now:)` after `seconds`.
        case arm(index: Int, seconds: Double)
        /// Log the flip, `detail` (`suppressed`: flips of this link not logged since the last line).
        case log(index: Int, detail: String, suppressed: Int)
    }

    /// One link: what subscribers last saw, and since when.
    private struct Link: Sendable {
        var shown: Bool
        /// When `shown` was last changed (seconds on the monitor's clock that never steps).
        var lastShown: Double
        /// The newest guess and its detail, held until the interval ends.
        var held: (metered: Bool, detail: String)?
        /// A timer for the interval's end is on its way.
        var armed = false
        var logs: LogRateLimiter
    }

    /// Seconds between two `show`s of one link.
    public let interval: Double
    /// Seconds between two log lines about one link's flips.
    public let logInterval: Double
    private var links: [Int: Link] = [:]

    public init(interval: Double = 1, logInterval: Double = 60) {
        self.interval = interval
        self.logInterval = logInterval
    }

    /// The guess subscribers were last shown for link `index`; nil while it never flipped
    /// (then the raw guess is what they see).
    public func shown(_ index: Int) -> Bool? {
        links[index]?.shown
    }

    /// `shown(_:)` of every link that has flipped.
    public var shownGuesses: [Int: Bool] {
        links.mapValues(\.shown)
    }

    /// Link `index`'s guess is now `metered` at `now`, because of `detail` (what the lease or
    /// NetworkManager said); `shown` is what its status said until now (used when the link is
    /// new here).
    public mutating func guessChanged(index: Int, metered: Bool, shown: Bool, detail: String, now: Double) -> [Action] {
        var actions: [Action] = []
        var link: Link
        if let known = links[index] {
            link = known
            let admitted = link.logs.admit(now: now)
            if admitted.allowed { actions.append(.log(index: index, detail: detail, suppressed: admitted.suppressedBefore)) }
        } else {
            // The first word on a link (its lease read at start) is no flip: always said, and
            // the flips after it have their own line a minute.
            link = Link(shown: shown, lastShown: -.infinity, logs: LogRateLimiter(burst: 1, interval: logInterval))
            actions.append(.log(index: index, detail: detail, suppressed: 0))
        }
        defer { links[index] = link }
        if link.armed {
            link.held = (metered, detail)
            return actions
        }
        guard metered != link.shown else { return actions }
        let since = now - link.lastShown
        if since >= interval {
            link.shown = metered
            link.lastShown = now
            return actions + [.show(index: index, metered: metered, detail: detail)]
        }
        link.held = (metered, detail)
        link.armed = true
        return actions + [.arm(index: index, seconds: interval - since)]
    }

    /// The timer of `arm` fired: the newest held guess is shown, unless it is what subscribers
    /// last saw.
    public mutating func intervalEnded(index: Int, now: Double) -> [Action] {
        guard var link = links[index], link.armed else { return [] }
        defer { links[index] = link }
        link.armed = false
        guard let held = link.held.take(), held.metered != link.shown else { return [] }
        link.shown = held.metered
        link.lastShown = now
        return [.show(index: index, metered: held.metered, detail: held.detail)]
    }

    /// Link `index` is gone, or its guesses were forgotten: nothing is held for it.
    public mutating func forget(_ index: Int) {
        links[index] = nil
    }

    /// Every link forgotten (the lease watcher stopped, NetworkManager left).
    public mutating func forgetAll() {
        links = [:]
    }
}
