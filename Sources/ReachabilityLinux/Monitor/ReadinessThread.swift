import FoundationEssentials
import ReachabilitySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let body: @Sendable () -> Void
    // Set once in `init`, released by the thread when it ends (then never touched again).
    private var keepAlive: AnyObject?
    private let name: String
    /// Guards the pipe: `stop()` writes to it only while the thread has not closed it.
    private let pipeState = Mutex((isStopped: false, isClosed: false))

    /// - Parameters:
    ///   - fileDescriptor: the descriptor to wait on; it must stay open while the thread runs,
    ///     which `keepAlive` (its owner) guarantees.
    ///   - body: run on the thread whenever the descriptor is readable (or has an error pending);
    ///     it must read until the descriptor would block, or the thread spins.
    /// Throws `POSIXError` when no pipe can be made (`pipe(2)`).
    init(fileDescriptor: Int32, keepAlive: AnyObject, name: String, body: @escaping @Sendable () -> Void) throws {
        var ends: [Int32] = [-1, -1]
        // pipe2(2) is not visible without _GNU_SOURCE; pipe + fcntl does the same here: a child
        // forked in between would only hold a wake-up pipe nobody waits for the end of.
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        self.fd = fileDescriptor
        self.wakeRead = ends[0]
        self.wakeWrite = ends[1]
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
        pipeState.withLock { state in
            guard !state.isStopped && !state.isClosed else { return }
            state.isStopped = true
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    deinit { closePipe() }

    private func closePipe() {
        pipeState.withLock { state in
            guard !state.isClosed else { return }
            state.isClosed = true
            close(wakeRead)
            close(wakeWrite)
        }
    }

    private func run() {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0; fds[1].revents = 0
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            // Stop wins over a readable socket: after stop() the descriptor may belong to no one.
            if fds[1].revents != 0 { break }
            if fds[0].revents & Int16(POLLNVAL) != 0 { break }
            if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 { body() }
        }
        keepAlive = nil
        closePipe()
    }
}
