import ReachabilitySystem
import Synchronization

/// A thread of its own that sleeps in `poll(2)` on one descriptor and runs `body` each time it
/// becomes readable — what `ip monitor` does with its netlink socket.
///
/// A `DispatchSourceRead` costs a hand-over per wake-up: Dispatch's manager thread returns from
/// `epoll_wait`, then wakes a worker thread (a futex) that reads; on a busy machine that second
/// wake-up can wait for a CPU. Here the thread the kernel wakes is the one that reads. `body`
/// typically does `queue.sync { … }`, which runs on this very thread once the queue is free, so
/// the queue still owns the state and nothing else changes.
///
/// `stop()` never waits for the thread (it may be waiting for the queue `stop()` is called on):
/// it writes to a pipe the thread polls too, and the thread ends on its own, releasing
/// `keepAlive` (the owner of the descriptor) and closing the pipe. Idle, it costs no wake-up.
final class ReadinessThread: @unchecked Sendable {
    private let fd: CInt
    /// The number of the wake-up pipe's read end, for the thread's `poll`; open until the
    /// thread has ended (or, when it never started, until deinit).
    private let wakeRead: CInt
    private let body: @Sendable () -> Void
    // Set once in `init`, released by the thread when it ends (then never touched again).
    private var keepAlive: AnyObject?
    private let name: String
    /// The wake-up pipe: `stop()` writes to it only while the thread has not closed it.
    private let wake: Mutex<WakePipe>

    private struct WakePipe: ~Copyable {
        /// nil once closed.
        var pipe: FileDescriptor.Pipe?
        var isStopped = false
    }

    /// - Parameters:
    ///   - fileDescriptor: the descriptor to wait on; it must stay open while the thread runs,
    ///     which `keepAlive` (its owner) guarantees.
    ///   - body: run on the thread whenever the descriptor is readable (or has an error pending);
    ///     it must read until the descriptor would block, or the thread spins.
    /// - Throws: `Errno` when no pipe can be made (`pipe(2)`, `fcntl(2)`).
    init(fileDescriptor: CInt, keepAlive: AnyObject, name: String, body: @escaping @Sendable () -> Void) throws {
        let pipe = try FileDescriptor.Pipe()
        // stop() must never block, whoever calls it.
        try pipe.writeEnd.setNonBlocking()
        self.fd = fileDescriptor
        self.wakeRead = pipe.readEnd.rawValue
        self.wake = Mutex(WakePipe(pipe: pipe))
        self.keepAlive = keepAlive
        self.name = name
        self.body = body
    }

    /// Starts the thread (detached, named `name`); false when none could be made.
    @discardableResult
    func start() -> Bool {
        do {
            try DetachedThread.start(name: name) { [self] in run() }
            return true
        } catch {
            return false
        }
    }

    /// Asks the thread to end; returns at once. Calling it twice does nothing.
    func stop() {
        wake.withLock { state in
            guard !state.isStopped else { return }
            state.isStopped = true
            var byte: UInt8 = 1
            _ = withUnsafeBytes(of: &byte) { try? state.pipe?.writeEnd.write($0) }
        }
    }

    deinit { closePipe() }

    private func closePipe() {
        wake.withLock { $0.pipe = nil }
    }

    private func run() {
        waiting: while true {
            do {
                switch try FileDescriptor.poll(fd, for: .readable, cancelledBy: wakeRead, timeoutMilliseconds: -1) {
                case .ready: body()
                case .pending: continue   // a signal
                case .cancelled: break waiting
                }
            } catch {
                // The descriptor was closed under the thread (EBADF), or poll itself failed.
                break waiting
            }
        }
        keepAlive = nil
        closePipe()
    }
}
