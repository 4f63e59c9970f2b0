import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

/// `STATE/event-sequence`: the highest event number reachd may have published, so that the next
/// run starts above it even when the wall clock stepped back (`SequenceReservation` decides
/// what to write; this performs it). Written atomically (`FileSystem.writeAtomically`), a block
/// ahead: once at start, then in the background every `block / 2` events.
final class EventNumberFile: Sendable {
    static let name = "event-sequence"

    let path: String
    private let log: LogSink
    private let state: Mutex<SequenceReservation>
    /// Background writes, one after another.
    private let writer = DispatchQueue(label: "reachd.event-sequence", qos: .utility)
    /// A failure is logged once at warning, then at debug.
    private let reportedFailure = Atomic<Bool>(false)

    private init(path: String, reservation: SequenceReservation, log: LogSink) {
        self.path = path
        self.state = Mutex(reservation)
        self.log = log
    }

    /// Where the state directory is: `$STATE_DIRECTORY` (systemd's `StateDirectory=reachd`; the
    /// first of several), else `/var/lib/reachd` for root; nil for anyone else (numbers then
    /// start at the clock alone).
    static func directory(environment: [String: String], effectiveUserID: UInt32) -> String? {
        if let given = environment["STATE_DIRECTORY"], let first = given.split(separator: ":").first, first.hasPrefix("/") {
            return String(first)
        }
        return effectiveUserID == 0 ? "/var/lib/reachd" : nil
    }

    /// Reads the kept number in `directory` (made when missing), and returns the first event
    /// number of this run with the file that keeps the numbers rising; the file is nil without
    /// a directory (logged).
    static func open(directory: String?, clock: Date, log: LogSink) -> (first: Int, file: EventNumberFile?) {
        let clockMilliseconds = Int(clock.timeIntervalSince1970 * 1000)
        guard let directory else {
            log.debug("no state directory: event numbers start at the clock (\(clockMilliseconds))")
            return (clockMilliseconds, nil)
        }
        let path = directory + "/" + name
        do {
            try FileSystem.createDirectories(directory, mode: 0o755)
        } catch {
            log.warning("cannot use the state directory: \(error.text); event numbers start at the clock and go back with it")
            return (clockMilliseconds, nil)
        }
        var kept: Int?
        do throws(Errno) {
            // One read of a few bytes: the file holds one number.
            let file = try FileDescriptor.open(path)
            var buffer = [UInt8](repeating: 0, count: 64)
            let read: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try file.read(into: raw) }
            }
            let count = try read.get()
            kept = SequenceReservation.parse(String(decoding: buffer[..<count], as: UTF8.self))
            if kept == nil { log.warning("\(path): not an event number; starting at the clock") }
        } catch {
            if error != .noSuchFile { log.warning("cannot read \(path): \(error.text); starting at the clock") }
        }
        let (first, reservation) = SequenceReservation.start(clockMilliseconds: clockMilliseconds, kept: kept)
        if let kept, first > clockMilliseconds {
            log.notice("the wall clock is behind the last event number (\(kept)): event numbers go on from \(first)")
        }
        let file = EventNumberFile(path: path, reservation: reservation, log: log)
        // Written before anything is published: the first event cannot be reused by a crash.
        file.publishing(first)
        return (first, file)
    }

    /// An event numbered `sequence` is about to reach subscribers (on the publisher's queue):
    /// waits for a write only when the reservation ran out.
    func publishing(_ sequence: Int) {
        let action = state.withLock { $0.publishing(sequence) }
        switch action {
        case nil:
            return
        case .writeNow(let number):
            write(number)
        case .writeLater(let number):
            writer.async { [self] in write(number) }
        }
    }

    private func write(_ number: Int) {
        do {
            try FileSystem.writeAtomically(path: path, bytes: Array("\(number)\n".utf8), mode: 0o644)
            state.withLock { $0.written(number) }
        } catch {
            state.withLock { $0.writeFailed(number) }
            if reportedFailure.exchange(true, ordering: .relaxed) {
                log.debug("cannot write \(path): \(error.text)")
            } else {
                log.warning("cannot write \(path): \(error.text); after a restart event numbers may go back with the clock")
            }
        }
    }
}
