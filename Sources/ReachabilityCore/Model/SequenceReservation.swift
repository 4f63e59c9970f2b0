/// Event numbers that keep rising across restarts, whatever the wall clock does: a state machine
/// (the daemon performs its writes) over a number kept in a file, the highest that may have been
/// handed out.
///
/// A run starts at the larger of the wall clock in milliseconds and the kept number + 1, so a
/// clock stepped back (a dead RTC battery, NTP's first sync, someone setting the date) never
/// makes numbers go back, and without a kept number they still start above the last run's
/// (which rose by far less than 1000 a second). The file is not written per event: it holds a
/// reservation `block` numbers ahead, written before the first event is published and renewed
/// in the background when half of it is used; an event past the reservation (the renewal not
/// done yet, or failed) is written for before it is published. So a crash at any moment leaves
/// a kept number at or above every number a subscriber saw.
public struct SequenceReservation: Equatable, Sendable {
    /// How many numbers one write reserves.
    public static let defaultBlock = 1024

    /// A write the daemon performs, then reports with `written(_:)` or `writeFailed(_:)`.
    public enum Action: Equatable, Sendable {
        /// Write `number` before the event is published (blocking the publisher).
        case writeNow(Int)
        /// Write `number` in the background.
        case writeLater(Int)
    }

    /// Numbers reserved per write.
    public let block: Int
    /// Numbers up to this may be published: the file says so, or the write for it failed and
    /// the next try waits half a block; nil: nothing written yet.
    public private(set) var reserved: Int?
    /// A background write on its way.
    public private(set) var pending: Int?

    /// The first number of a run and the state to go on with.
    /// - Parameters:
    ///   - clockMilliseconds: the wall clock now, in milliseconds since 1970.
    ///   - kept: the number in the file, if there is one.
    public static func start(clockMilliseconds: Int, kept: Int?, block: Int = defaultBlock) -> (first: Int, reservation: SequenceReservation) {
        var first = clockMilliseconds
        if let kept, kept < Int.max - 2 * block, kept + 1 > first { first = kept + 1 }
        return (first, SequenceReservation(block: max(2, block)))
    }

    public init(block: Int = defaultBlock) {
        self.block = block
    }

    /// An event numbered `sequence` is about to be published: what to write first, or meanwhile.
    public mutating func publishing(_ sequence: Int) -> Action? {
        guard let reserved, sequence <= reserved else {
            // Nothing written for it yet: the subscriber must not see it before the file does.
            pending = nil
            return .writeNow(sequence + block)
        }
        guard pending == nil, sequence > reserved - block / 2 else { return nil }
        let next = sequence + block
        pending = next
        return .writeLater(next)
    }

    /// `number` is in the file.
    public mutating func written(_ number: Int) {
        if pending == number { pending = nil }
        reserved = max(reserved ?? number, number)
    }

    /// Writing `number` failed (the daemon logs it). Events go on up to it without the file —
    /// holding them back would help nobody — and the next try comes half a block later, so an
    /// unwritable file costs one write per `block / 2` events, not one per event.
    public mutating func writeFailed(_ number: Int) {
        if pending == number { pending = nil }
        reserved = max(reserved ?? number, number)
    }

    /// The number a state file holds: decimal digits, optionally followed by a newline; nil for
    /// anything else (an empty or damaged file starts from the clock).
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !trimmed.isEmpty, trimmed.count <= 18, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(trimmed)
    }
}
