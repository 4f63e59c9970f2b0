import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its end (`posix_spawn(3)`): a clean environment, `input` on its stdin,
/// its stdout and stderr handed over line by line, and a time limit after which its whole
/// process group gets SIGTERM and, 2 s later, SIGKILL. The program runs in a process group of
/// its own with default signal dispositions and no blocked signals, whatever this process set.
public enum ChildProcess {
    /// How the program ended.
    public enum Outcome: Equatable, Sendable {
        /// It exited with this status (`WEXITSTATUS`).
        case exited(Int32)
        /// A signal ended it (`WTERMSIG`).
        case signaled(Int32)
        /// Still running at the time limit: killed (SIGTERM, then SIGKILL).
        case timedOut
        /// It could not be started (`posix_spawn(3)` failed: no such file, no interpreter, …).
        case failedToStart(Errno)
    }

    /// Which of the program's output streams a line came from.
    public enum Stream: Sendable {
        /// Its stdout.
        case output
        /// Its stderr.
        case error
    }

    /// One spawn at a time: a pipe is created before its close-on-exec flag is set, and no
    /// other child may inherit it in that moment (its end-of-file would wait for that child).
    static let spawnLock = Mutex(())

    /// Runs `body` while no child is being spawned: for code that opens a descriptor before it
    /// can set its close-on-exec flag (`mkstemp`).
    public static func withoutSpawning<T>(_ body: () throws -> T) rethrows -> T {
        try spawnLock.withLock { _ in try body() }
    }

    /// The longest line handed over; a longer one is split.
    public static let maximumLine = 4096

    /// Runs `path` with `arguments` and exactly `environment` (`NAME=value`), writes `input` to
    /// its stdin, hands `onLine` each line it writes (without the newline), and returns when it
    /// has ended (or was killed `timeout` seconds after it started).
    public static func run(_ path: String, arguments: [String] = [], environment: [String], input: [UInt8] = [],
                    timeout: Double, onLine: (Stream, String) -> Void) -> Outcome {
        let spawned: Spawned
        do {
            spawned = try spawn(path, arguments: arguments, environment: environment,
                                input: .pipe, output: .pipe, error: .pipe, newProcessGroup: true)
        } catch {
            return .failedToStart(error)
        }
        return supervise(pid: spawned.pid, stdin: spawned.input, stdout: spawned.output, stderr: spawned.error,
                         input: input, timeout: timeout, onLine: onLine)
    }

    private static func supervise(pid: pid_t, stdin: CInt, stdout: CInt, stderr: CInt, input: [UInt8],
                                  timeout: Double, onLine: (Stream, String) -> Void) -> Outcome {
        for fd in [stdin, stdout, stderr] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var inputFD: CInt = stdin, written = 0
        if input.isEmpty { close(inputFD); inputFD = -1 }
        var readers: [(fd: CInt, stream: Stream, lines: LineSplitter)] =
            [(stdout, .output, LineSplitter(maximum: maximumLine)), (stderr, .error, LineSplitter(maximum: maximumLine))]
        let start = MonotonicClock.nanoseconds()
        let deadline = start + UInt64(max(0, timeout) * 1e9)
        var killAt: UInt64?
        var timedOut = false
        var waitStatus: CInt = 0

        /// Hands over the rest of reader `index`, the last line without its newline.
        func finish(_ index: Int) {
            if let last = readers[index].lines.finish() { onLine(readers[index].stream, last) }
        }
        func drain(_ index: Int) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while readers[index].fd >= 0 {
                let fd = readers[index].fd
                let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in try retryingOnInterrupt("read") { read(fd, raw.baseAddress, raw.count) } }
                }
                switch received {
                case .success(let count) where count > 0:
                    for line in readers[index].lines.append(buffer[..<count]) { onLine(readers[index].stream, line) }
                case .failure(let error) where error.isWouldBlock:
                    return
                case .success, .failure:
                    // End of file, or an error: nothing more will come.
                    close(fd); readers[index].fd = -1
                }
            }
        }

        while true {
            let result = waitpid(pid, &waitStatus, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) {
                // Exited: take what it wrote; a background child that keeps the pipes is not waited for.
                for index in readers.indices { drain(index); finish(index) }
                break
            }
            let now = MonotonicClock.nanoseconds()
            if now >= deadline && !timedOut {
                timedOut = true
                kill(-pid, SIGTERM)
                killAt = now + 2_000_000_000
            }
            if let at = killAt, now >= at {
                kill(-pid, SIGKILL)
                killAt = nil
            }
            var fds = readers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            fds.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0))
            _ = poll(&fds, nfds_t(fds.count), 20)
            for index in readers.indices where fds[index].revents != 0 { drain(index) }
            if inputFD >= 0 && fds[2].revents != 0 {
                let fd = inputFD, offset = written
                let sent: Result<Int, Errno> = input.withUnsafeBytes { bytes in
                    Result { () throws(Errno) in
                        try retryingOnInterrupt("write") { write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset) }
                    }
                }
                switch sent {
                case .success(let count): written += count
                case .failure(let error) where error.isWouldBlock: break
                case .failure: written = input.count   // the child closed its stdin: stop feeding it
                }
                if written >= input.count { close(inputFD); inputFD = -1 }
            }
        }
        if inputFD >= 0 { close(inputFD) }
        for reader in readers where reader.fd >= 0 { close(reader.fd) }
        if timedOut { return .timedOut }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        if waitStatus & 0x7f == 0 { return .exited((waitStatus >> 8) & 0xff) }
        return .signaled(waitStatus & 0x7f)
    }
}
