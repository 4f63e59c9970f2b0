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
    private static let spawnLock = Mutex(())

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
        var stdinPipe: [CInt] = [-1, -1], outPipe: [CInt] = [-1, -1], errPipe: [CInt] = [-1, -1]
        var pid: pid_t = 0
        let spawnError: CInt = spawnLock.withLock { _ in
            for index in 0..<3 {
                let result: CInt
                switch index {
                case 0: result = pipe(&stdinPipe)
                case 1: result = pipe(&outPipe)
                default: result = pipe(&errPipe)
                }
                if result != 0 { return errno }
            }
            for fd in stdinPipe + outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            posix_spawnattr_setpgroup(&attributes, 0)
            var noSignals = sigset_t()
            sigemptyset(&noSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGPIPE, SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            return posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        }
        // The child's ends are its own now (or nobody's).
        for fd in [stdinPipe[0], outPipe[1], errPipe[1]] where fd >= 0 { close(fd) }
        guard spawnError == 0 else {
            for fd in [stdinPipe[1], outPipe[0], errPipe[0]] where fd >= 0 { close(fd) }
            return .failedToStart(Errno(spawnError, call: "posix_spawn", path: path))
        }
        return supervise(pid: pid, stdin: stdinPipe[1], stdout: outPipe[0], stderr: errPipe[0],
                         input: input, timeout: timeout, onLine: onLine)
    }

    private static func supervise(pid: pid_t, stdin: CInt, stdout: CInt, stderr: CInt, input: [UInt8],
                                  timeout: Double, onLine: (Stream, String) -> Void) -> Outcome {
        for fd in [stdin, stdout, stderr] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var inputFD: CInt = stdin, written = 0
        if input.isEmpty { close(inputFD); inputFD = -1 }
        var readers: [(fd: CInt, stream: Stream, pending: [UInt8])] = [(stdout, .output, []), (stderr, .error, [])]
        let start = MonotonicClock.nanoseconds()
        let deadline = start + UInt64(max(0, timeout) * 1e9)
        var killAt: UInt64?
        var timedOut = false
        var waitStatus: CInt = 0

        /// Hands over the complete lines (and, with `flush`, the rest) of reader `index`.
        func emit(_ index: Int, flush: Bool) {
            let pending = readers[index].pending, stream = readers[index].stream
            var start = 0
            while start < pending.count {
                let rest = pending[start...]
                if let newline = rest.firstIndex(of: UInt8(ascii: "\n")), newline - start <= maximumLine {
                    onLine(stream, String(decoding: pending[start..<newline], as: UTF8.self))
                    start = newline + 1
                } else if rest.count >= maximumLine || flush {
                    let end = min(pending.count, start + maximumLine)
                    onLine(stream, String(decoding: pending[start..<end], as: UTF8.self))
                    start = end
                } else {
                    break
                }
            }
            readers[index].pending.removeFirst(start)
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
                    readers[index].pending += buffer[..<count]
                    emit(index, flush: false)
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
                for index in readers.indices { drain(index); emit(index, flush: true) }
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
