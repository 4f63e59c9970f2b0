import FoundationEssentials
import ReachabilityCore

/// What the dispatcher has acted on, kept in its state directory across its own restarts: the
/// sequence number of the last event whose scripts have run, and the status they saw. With it,
/// a restarted dispatcher resumes `Subscribe(after:)` where it stopped, and a restarted reachd
/// (a `resync` or fresh `initial` event) is compared with what the scripts last saw: only a
/// real difference runs them again. Nothing is lost and nothing acted on twice.
public struct DispatcherProgress: Codable, Equatable, Sendable {
    public var sequence: Int
    public var status: Status

    public init(sequence: Int, status: Status) { self.sequence = sequence; self.status = status }

    /// What to hand to the scripts for an event received from the subscription, given the
    /// progress so far (nil: nothing acted on yet, this boot). Nil means nothing to run: the
    /// event repeats what was already acted on.
    ///
    /// - A change event is acted on as it is (the subscription already drops repeated numbers).
    /// - An `initial` event without progress is acted on as `initial` (the state at start).
    /// - An `initial` event with progress (reachd restarted, or the missed events are gone) runs
    ///   the scripts only when the status differs from the one they last saw, as a change from
    ///   that status with the event's reason (`resync`, `initial`).
    public static func eventToAct(on event: ReachabilityEvent, after progress: DispatcherProgress?) -> ReachabilityEvent? {
        guard event.event == .initial else { return event }
        guard let progress else { return event }
        let changes = event.current.changes(from: progress.status)
        if changes.isEmpty { return nil }
        return ReachabilityEvent(sequence: event.sequence, timestamp: event.timestamp, event: .reachabilityChanged,
                                 reason: event.reason, previous: progress.status, current: event.current, changes: changes)
    }
}
