/// What reachd does around the machine's sleep, as logind announces it: a state machine (each
/// event method returns the actions; `LogindSleepMonitor` performs them on the bus).
///
/// The rules:
/// - while awake and logind runs, reachd holds a `delay` inhibitor for `sleep`, so that logind
///   waits for it before the machine sleeps;
/// - `PrepareForSleep(true)`: make connectivity `unknown` and publish it (reason `sleeping`),
///   then let the inhibitor go: logind sleeps as soon as every delay lock is gone, and the
///   targets that follow reachd have been told before the links die;
/// - `PrepareForSleep(false)`: re-read the links and check afresh (reason `resumed`), and take
///   the inhibitor again for the next sleep;
/// - only the current owner of `org.freedesktop.login1` is believed: any local peer can send a
///   signal that looks like logind's, addressed to reachd, and match rules do not filter it;
/// - logind leaving the bus while the machine is said to sleep ends the sleep (no `false` will
///   ever come from that owner); a new owner gets a new inhibitor;
/// - a sleep that never ends ends: `PrepareForSleep(true)` with no `false` for `sleepLimit`
///   seconds of `CLOCK_MONOTONIC` (which stands still while the machine really sleeps, so only
///   time awake counts) is taken as a wake. A suspend that failed, or a logind that lost the
///   `false`, would otherwise leave connectivity `unknown` and the check stopped for good.
public struct SleepCoordinator: Equatable, Sendable {
    /// How long a sleep may go without `PrepareForSleep(false)`: 2 minutes awake.
    public static let defaultSleepLimit: Double = 120

    public enum Action: Equatable, Sendable {
        /// Call `Inhibit("sleep", "reachd", …, "delay")`; report with `inhibitorTaken()` or `inhibitorFailed()`.
        case takeInhibitor
        /// Close the inhibitor's file descriptor.
        case releaseInhibitor
        /// The machine is about to sleep: stop checking, publish connectivity `unknown` (reason
        /// `sleeping`), then report `sleepPrepared()`.
        case prepareForSleep
        /// The machine woke: re-read the links and routes, check at once (reason `resumed`).
        case resume
        /// Call `sleepLimitReached(now:)` after this many seconds of `CLOCK_MONOTONIC`.
        case armSleepLimit(seconds: Double)
    }

    /// Seconds of `CLOCK_MONOTONIC` after which an unended sleep counts as a wake.
    public let sleepLimit: Double
    /// `CLOCK_MONOTONIC` seconds when the current sleep was announced; nil while awake.
    public private(set) var sleepStarted: Double?

    /// Who owns `org.freedesktop.login1` now (a unique name); nil: logind does not run.
    public private(set) var owner: String?
    /// Between `PrepareForSleep(true)` and `(false)`.
    public private(set) var sleeping = false
    /// An `Inhibit` call is on its way.
    public private(set) var inhibitorRequested = false
    /// reachd holds the inhibitor's file descriptor.
    public private(set) var holdsInhibitor = false
    /// `prepareForSleep` was asked and `sleepPrepared()` has not answered yet.
    public private(set) var preparing = false

    /// - Parameter sleepLimit: seconds of `CLOCK_MONOTONIC` after which a sleep with no
    ///   `PrepareForSleep(false)` is taken as a wake (tests shorten it).
    public init(sleepLimit: Double = SleepCoordinator.defaultSleepLimit) {
        self.sleepLimit = sleepLimit
    }

    /// The bus says who owns logind's name (its answer to `GetNameOwner`, or `NameOwnerChanged`).
    public mutating func ownerChanged(to newOwner: String?) -> [Action] {
        guard newOwner != owner else { return [] }
        owner = newOwner
        var actions: [Action] = []
        if holdsInhibitor {
            // The old logind's lock means nothing to the new one.
            holdsInhibitor = false
            actions.append(.releaseInhibitor)
        }
        inhibitorRequested = false
        if sleeping {
            sleeping = false
            preparing = false
            sleepStarted = nil
            actions.append(.resume)
        }
        if newOwner != nil {
            inhibitorRequested = true
            actions.append(.takeInhibitor)
        }
        return actions
    }

    /// A `PrepareForSleep` signal from `sender` at `now` (`CLOCK_MONOTONIC` seconds); ignored
    /// unless the sender owns logind's name.
    public mutating func prepareForSleep(_ start: Bool, sender: String?, now: Double) -> [Action] {
        guard let owner, sender == owner else { return [] }
        switch (start, sleeping) {
        case (true, false):
            sleeping = true
            preparing = true
            sleepStarted = now
            return [.prepareForSleep, .armSleepLimit(seconds: sleepLimit)]
        case (false, true):
            return wake()
        case (true, true), (false, false):
            return []
        }
    }

    /// The timer of `armSleepLimit` fired at `now` (`CLOCK_MONOTONIC` seconds): a sleep that has
    /// lasted `sleepLimit` is taken as a wake (the caller logs it). A timer of a sleep that has
    /// ended since, or one that fired early, does nothing (the latter is armed again).
    public mutating func sleepLimitReached(now: Double) -> [Action] {
        guard sleeping, let sleepStarted else { return [] }
        let remaining = sleepStarted + sleepLimit - now
        guard remaining <= 0 else { return [.armSleepLimit(seconds: remaining)] }
        return wake()
    }

    private mutating func wake() -> [Action] {
        sleeping = false
        sleepStarted = nil
        var actions: [Action] = [.resume]
        if preparing {
            // Woken before the sleep was prepared (a cancelled sleep): the lock is still held.
            preparing = false
        }
        if !holdsInhibitor && !inhibitorRequested {
            inhibitorRequested = true
            actions.append(.takeInhibitor)
        }
        return actions
    }

    /// The `sleeping` status is published: the inhibitor may go.
    public mutating func sleepPrepared() -> [Action] {
        guard preparing else { return [] }
        preparing = false
        guard sleeping, holdsInhibitor else { return [] }
        holdsInhibitor = false
        return [.releaseInhibitor]
    }

    /// `Inhibit` answered with a file descriptor, now held.
    public mutating func inhibitorTaken() -> [Action] {
        inhibitorRequested = false
        holdsInhibitor = true
        // Asked before a sleep that has been prepared since: nothing to wait for any more.
        if sleeping && !preparing {
            holdsInhibitor = false
            return [.releaseInhibitor]
        }
        return []
    }

    /// `Inhibit` failed (no permission, logind gone): reachd follows the sleep without delaying it.
    public mutating func inhibitorFailed() {
        inhibitorRequested = false
    }
}
