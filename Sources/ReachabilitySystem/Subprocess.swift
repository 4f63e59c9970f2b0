import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program started to run beside this process (`posix_spawn(3)`, through the same call as
/// `ChildProcess`): its stdin from `/dev/null` or a pipe, its stdout and stderr read line by
/// line on a thread of its own (handed to `onLine` and kept) or discarded.
///
/// It starts with default signal dispositions, no blocked signals and no descriptor but 0, 1
/// and 2, whichever thread starts it. Its handle reaps it: `wait(timeout:)`, `isRunning` and
/// `killAndWait()` (`waitpid(2)`); a handle that goes away with its process still running kills
/// it (SIGKILL) and reaps it, so no zombie is left and no process outlives its handle.
public final class Subprocess: Sendable {
    /// Where its stdin comes from.
    public enum Input: Sendable {
        /// `/dev/null`: it reads end of file at once.
        case null
        /// A pipe: `writeInput(_:)` writes to it, `closeInput()` ends it.
        case pipe
    }

    /// Where its stdout goes.
    public enum Output: Sendable {
        /// To `/dev/null`.
        case discard
        /// Through a pipe, read line by line: handed to `onLine` and kept (`lines(.output)`).
        case lines
    }

    /// Where its stderr goes.
    public enum ErrorOutput: Sendable {
        /// To `/dev/null`.
        case discard
        /// Through a pipe of its own, read line by line (`lines(.error)`).
        case lines
        /// Wherever its stdout goes (`2>&1`): one stream, its lines in the order written.
        case intoOutput
    }

    /// Which stream a line came from.
    public typealias Stream = ChildProcess.Stream

    /// How it ended.
    public enum Termination: Equatable, Sendable {
        /// It exited with this status (`WEXITSTATUS`). -1: someone else reaped it (SIGCHLD
        /// ignored, another `waitpid(-1)`), and its status is lost.
        case exited(Int32)
        /// A signal ended it (`WTERMSIG`).
        case signaled(Int32)
    }

    /// What `wait(timeout:)` found.
    public enum Outcome: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)
        /// Still running when the time was up.
        case timedOut

        init(_ termination: Termination) {
            switch termination {
            case .exited(let status): self = .exited(status)
            case .signaled(let signal): self = .signaled(signal)
            }
        }
    }

    /// Its process id (also its process group's, when started with `newProcessGroup`).
    public let pid: pid_t
    /// Whether it leads a process group of its own.
    public let newProcessGroup: Bool
    private let shared: Shared
    /// The write end of its stdin, -1 when there is none or it was closed. Apart from `shared`:
    /// a write may block, and must not hold up `isRunning`.
    private let input: Mutex<CInt>

    /// Starts `path` (no search of `PATH`) with `arguments` and exactly `environment`
    /// (`NAME=value`).
    ///
    /// - Parameters:
    ///   - directory: its working directory (`posix_spawn_file_actions_addchdir_np`); nil:
    ///     this process's. A relative `path` is looked up from there.
    ///   - newProcessGroup: it leads a process group of its own (`setpgid(0, 0)`), so that
    ///     `signal(_:toGroup:)` reaches what it starts too; else it stays in this process's.
    ///   - onLine: called on the reader thread with each line of stdout and stderr (`.lines`),
    ///     without its newline; the last one also when it has none. Not called with a lock held.
    /// - Throws: `Errno`: of `posix_spawn` with `path` (`ENOENT`: no such program), of `chdir`
    ///   with `directory`, of `pipe`, or of `pthread_create` (the process is then killed).
    public init(_ path: String, arguments: [String] = [], environment: [String], directory: String? = nil,
                input: Input = .null, output: Output = .lines, error: ErrorOutput = .lines,
                newProcessGroup: Bool = false, onLine: (@Sendable (Stream, String) -> Void)? = nil) throws(Errno) {
        let plumbing: (input: ChildProcess.Plumbing, output: ChildProcess.Plumbing, error: ChildProcess.Plumbing)
        switch input {
        case .null: plumbing.input = .null
        case .pipe: plumbing.input = .pipe
        }
        switch output {
        case .discard: plumbing.output = .null
        case .lines: plumbing.output = .pipe
        }
        switch error {
        case .discard: plumbing.error = .null
        case .lines: plumbing.error = .pipe
        case .intoOutput: plumbing.error = .output
        }
        let spawned = try ChildProcess.spawn(path, arguments: arguments, environment: environment, directory: directory,
                                             input: plumbing.input, output: plumbing.output, error: plumbing.error,
                                             newProcessGroup: newProcessGroup)
        pid = spawned.pid
        self.newProcessGroup = newProcessGroup
        self.input = Mutex(spawned.input)
        shared = Shared(onLine: onLine)
        var readers: [(fd: CInt, stream: Stream)] = []
        if spawned.output >= 0 { readers.append((spawned.output, .output)) }
        if spawned.error >= 0 { readers.append((spawned.error, .error)) }
        guard !readers.isEmpty else {
            shared.state.withLock { $0.readerDone = true }
            return
        }
        let shared = self.shared, pipes = readers
        do {
            try DetachedThread.start(name: "subprocess-io") { Self.read(pipes, into: shared) }
        } catch {
            for reader in readers { close(reader.fd) }
            shared.state.withLock { $0.readerDone = true }
            throw error
        }
    }

    deinit {
        closeInput()
        if reap() == nil {
            _ = kill(newProcessGroup ? -pid : pid, SIGKILL)
            _ = waitBlocking()
        }
    }

    // MARK: Its life

    /// True until it has ended (`waitpid(2)` with `WNOHANG`, which reaps it then).
    public var isRunning: Bool { reap() == nil }

    /// How it ended; nil while it runs.
    public var termination: Termination? { reap() }

    /// Sends `signal` (`kill(2)`): to the process, or with `toGroup` to its process group
    /// (`kill(-pid, …)`, which needs `newProcessGroup`).
    ///
    /// - Throws: `Errno` of `kill`: `ESRCH` once it has ended and been reaped (its pid may be
    ///   another process's by then, so nothing is sent), `EPERM`.
    public func signal(_ signal: CInt, toGroup: Bool = false) throws(Errno) {
        let target = toGroup ? -pid : pid
        let result: CInt = shared.state.withLock { state in
            // Under the lock that reaping takes: the pid is still this process's (or its zombie's).
            guard state.termination == nil else { return ESRCH }
            return kill(target, signal) == 0 ? 0 : errno
        }
        if result != 0 { throw Errno(result, call: "kill", path: nil) }
    }

    /// Waits until it has ended, at most `timeout` seconds (nil: as long as it takes), and
    /// then until what it wrote has been read (`lines(_:)` holds all of it once this returns).
    public func wait(timeout: Double? = nil) -> Outcome {
        let deadline = timeout.map { MonotonicClock.nanoseconds() + UInt64(max(0, $0) * 1e9) }
        var pause: UInt32 = 500
        while true {
            if let termination = reap() {
                waitForReader()
                return Outcome(termination)
            }
            if let deadline, MonotonicClock.nanoseconds() >= deadline { return .timedOut }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// SIGKILL (to its process group with `newProcessGroup`, which takes what it started too)
    /// unless it has ended, then `wait()`. SIGKILL, not SIGTERM: it cannot be blocked or caught.
    @discardableResult
    public func killAndWait() -> Termination {
        if let termination = reap() {
            waitForReader()
            return termination
        }
        try? signal(SIGKILL, toGroup: newProcessGroup)
        switch wait() {
        case .exited(let status): return .exited(status)
        case .signaled(let signal): return .signaled(signal)
        case .timedOut: return .signaled(SIGKILL)   // wait() without a deadline never times out
        }
    }

    // MARK: Its stdin

    /// Writes all of `bytes` to its stdin (`write(2)`, blocking while the pipe is full).
    ///
    /// - Throws: `Errno`: `EBADF` without a stdin pipe or after `closeInput()`; `EPIPE` when it
    ///   closed its stdin (and SIGPIPE, unless this process ignores it, as `write(2)` does).
    public func writeInput(_ bytes: [UInt8]) throws(Errno) {
        let result: Result<Void, Errno> = input.withLock { fd in
            guard fd >= 0 else { return .failure(Errno(EBADF, call: "write")) }
            let descriptor = fd
            return bytes.withUnsafeBytes { buffer in
                Result { () throws(Errno) in try FileDescriptor.writeAll(buffer, to: descriptor) }
            }
        }
        try result.get()
    }

    /// Closes its stdin (`close(2)`): it reads end of file. Again: nothing.
    public func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    // MARK: What it wrote

    /// The lines it wrote to `stream` so far (`.lines` only), without their newlines; the
    /// last one without a newline once the stream has ended.
    public func lines(_ stream: Stream) -> [String] {
        shared.state.withLock { $0.lines[stream.index] }
    }

    /// What it wrote to `stream` so far, as text: its lines with their newlines.
    public func text(_ stream: Stream) -> String {
        shared.state.withLock { state in
            let lines = state.lines[stream.index]
            guard !lines.isEmpty else { return "" }
            return lines.joined(separator: "\n") + (state.unterminated[stream.index] ? "" : "\n")
        }
    }

    // MARK: Reaping and reading

    /// Reaps it when it has ended (`waitpid` with `WNOHANG`); its termination, nil while it runs.
    private func reap() -> Termination? {
        let pid = self.pid
        return shared.state.withLock { state in
            if let termination = state.termination { return termination }
            var status: CInt = 0
            while true {
                let result = waitpid(pid, &status, WNOHANG)
                if result == 0 { return nil }
                if result == pid {
                    state.termination = Self.decode(status)
                    return state.termination
                }
                if errno == EINTR { continue }
                state.termination = .exited(-1)
                return state.termination
            }
        }
    }

    /// `waitpid` without `WNOHANG`, for deinit after SIGKILL: nothing else can wait on it then.
    private func waitBlocking() -> Termination {
        var status: CInt = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return .exited(-1) }
        }
        let termination = Self.decode(status)
        shared.state.withLock { $0.termination = termination }
        return termination
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG`, macros Swift does not import.
    private static func decode(_ status: CInt) -> Termination {
        status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
    }

    /// Waits until the reader thread has taken everything: it ends soon after the process
    /// has, even when something the process started still holds the pipes.
    private func waitForReader() {
        var pause: UInt32 = 200
        while !shared.state.withLock({ $0.readerDone }) {
            usleep(pause)
            pause = min(pause * 2, 5_000)
        }
    }

    /// The reader thread: `poll(2)` on the pipes, lines to the state and to `onLine`, until end
    /// of file on each, or until the process has ended and what is in the pipes has been read.
    private static func read(_ pipes: [(fd: CInt, stream: Stream)], into shared: Shared) {
        var readers = pipes.map { (fd: $0.fd, stream: $0.stream, lines: LineSplitter()) }
        for reader in readers { _ = fcntl(reader.fd, F_SETFL, fcntl(reader.fd, F_GETFL) | O_NONBLOCK) }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        func deliver(_ stream: Stream, _ lines: [String], unterminated: Bool = false) {
            guard !lines.isEmpty else { return }
            shared.state.withLock { state in
                state.lines[stream.index] += lines
                if unterminated { state.unterminated[stream.index] = true }
            }
            if let onLine = shared.onLine { for line in lines { onLine(stream, line) } }
        }
        while !readers.isEmpty {
            // Once it has been reaped, all it wrote is in the pipes: read that, and stop even
            // if a process it started keeps the write ends.
            let ended = shared.state.withLock { $0.termination != nil }
            var fds = readers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if !ended { _ = poll(&fds, nfds_t(fds.count), 50) }
            var finished: [Int] = []
            for index in readers.indices where ended || fds[index].revents != 0 {
                var open = true
                reading: while true {
                    let fd = readers[index].fd
                    let count = buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress, raw.count) }
                    if count > 0 {
                        deliver(readers[index].stream, readers[index].lines.append(buffer[..<count]))
                        continue
                    }
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break reading }
                    open = false   // end of file, or an error: nothing more will come
                    break reading
                }
                if !open || ended { finished.append(index) }
            }
            for index in finished.reversed() {
                let reader = readers.remove(at: index)
                close(reader.fd)
                var splitter = reader.lines
                if let last = splitter.finish() { deliver(reader.stream, [last], unterminated: true) }
            }
        }
        shared.state.withLock { $0.readerDone = true }
    }

    /// What the handle and the reader thread share; the reader holds no reference to the
    /// handle, so that the handle can go (and kill the process) while it reads.
    private final class Shared: Sendable {
        struct State {
            var termination: Termination?
            var lines: [[String]] = [[], []]
            var unterminated = [false, false]
            var readerDone = false
        }

        let state = Mutex(State())
        let onLine: (@Sendable (Stream, String) -> Void)?

        init(onLine: (@Sendable (Stream, String) -> Void)?) {
            self.onLine = onLine
        }
    }
}

extension ChildProcess.Stream {
    /// Its place in per-stream arrays.
    fileprivate var index: Int {
        switch self {
        case .output: return 0
        case .error: return 1
        }
    }
}
