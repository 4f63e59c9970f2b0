import Dispatch
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// Drives one sd-bus connection from Dispatch on its owner's serial queue: a read source on the
/// bus's descriptor, a write source resumed only while sd-bus has something to send, and a timer
/// for sd-bus's own time-outs. `pump()` lets sd-bus do all it can (`sd_bus_process` until it
/// returns 0), then re-arms the write source and the timer from `sd_bus_get_events` and
/// `sd_bus_get_timeout`. Each `SDBusConnection` owns one.
final class SDBusDispatchDriver {
    private let bus: SDBus
    private let onFailure: (SDBusError) -> Void
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceRunning = false
    private var timer: DispatchSourceTimer?
    private var cancelled = false

    /// - Parameter onFailure: called on `queue` when sd-bus fails (the connection is lost); the
    ///   owner cancels the driver and lets the bus go.
    init(bus: SDBus, queue: DispatchQueue, onFailure: @escaping (SDBusError) -> Void) throws(SDBusError) {
        self.bus = bus
        self.onFailure = onFailure
        let fd = try bus.fileDescriptor()
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        read.setEventHandler { [weak self] in self?.pump() }
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        write.setEventHandler { [weak self] in self?.pump() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.pump() }
        // The fd belongs to the bus: keep the bus open until both fd sources are cancelled.
        read.setCancelHandler { withExtendedLifetime(bus) {} }
        write.setCancelHandler { withExtendedLifetime(bus) {} }
        readSource = read
        writeSource = write
        self.timer = timer
        read.resume()
        timer.resume()
    }

    deinit {
        cancel()
    }

    /// Processes what sd-bus has, then waits for what it wants next. A callback that runs inside
    /// it may cancel the driver (its owner disconnected): then nothing more is done.
    func pump() {
        guard !cancelled else { return }
        do {
            while try bus.process() {
                guard !cancelled else { return }
            }
            guard !cancelled else { return }
            let wantsWrite = try bus.events() & Int32(POLLOUT) != 0
            if let writeSource, wantsWrite != writeSourceRunning {
                if wantsWrite { writeSource.resume() } else { writeSource.suspend() }
                writeSourceRunning = wantsWrite
            }
            if let deadline = try bus.timeout() {
                let now = MonotonicClock.nanoseconds() / 1_000
                let delay = deadline > now ? min(deadline - now, 3_600_000_000) : 0
                timer?.schedule(deadline: .now() + .microseconds(Int(delay)))
            } else {
                timer?.schedule(deadline: .distantFuture)
            }
        } catch {
            onFailure(error)
        }
    }

    /// Stops the sources; the bus is released once they are gone.
    func cancel() {
        guard !cancelled else { return }
        cancelled = true
        readSource?.cancel()
        if let writeSource {
            writeSource.cancel()
            // A suspended source must be resumed once to be released (libdispatch traps otherwise).
            if !writeSourceRunning { writeSource.resume() }
        }
        timer?.cancel()
        readSource = nil
        writeSource = nil
        writeSourceRunning = false
        timer = nil
    }
}
