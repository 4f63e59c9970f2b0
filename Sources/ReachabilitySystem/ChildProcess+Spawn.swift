#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// Where one of a new process's standard descriptors comes from or goes to.
    enum Plumbing {
        /// `/dev/null`, opened in the child (`posix_spawn_file_actions_addopen`).
        case null
        /// A new pipe; this process keeps the other end.
        case pipe
        /// Descriptor 1 as it was set up (stderr only: `2>&1`).
        case output
    }

    /// A process just started, and this process's ends of its pipes (-1 where there is none),
    /// owned by the caller: it closes them.
    struct Spawned {
        let pid: pid_t
        /// The write end of the child's stdin.
        let input: CInt
        /// The read end of the child's stdout.
        let output: CInt
        /// The read end of the child's stderr.
        let error: CInt
    }

    /// Starts `path` with `arguments` and exactly `environment` (`NAME=value`): `posix_spawn(3)`
    /// with default signal dispositions and an empty signal mask (`POSIX_SPAWN_SETSIGDEF`,
    /// `POSIX_SPAWN_SETSIGMASK`: a thread of Dispatch's pool blocks signals, and a child would
    /// inherit that), in `directory` when given (`posix_spawn_file_actions_addchdir_np`), in a
    /// process group of its own with `newProcessGroup` (`POSIX_SPAWN_SETPGROUP`), with no
    /// descriptor but 0, 1 and 2 (`posix_spawn_file_actions_addclosefrom_np(3)`; and the pipes
    /// are close-on-exec, made while no other spawn runs).
    ///
    /// The one place that starts a process: `ChildProcess.run` and `Subprocess` go through it.
    ///
    /// - Throws: `Errno` of `pipe`, of `chdir` (with `directory` as its path) when the directory
    ///   cannot be entered, or of `posix_spawn` (with `path`): `ENOENT` for a program that is
    ///   not there, `EACCES` for one that may not run, `ENOEXEC`, …
    static func spawn(_ path: String, arguments: [String], environment: [String], directory: String? = nil,
                      input: Plumbing, output: Plumbing, error: Plumbing, newProcessGroup: Bool) throws(Errno) -> Spawned {
        var pipes: [[CInt]] = [[-1, -1], [-1, -1], [-1, -1]]
        var pid: pid_t = 0
        let plumbing = [input, output, error]
        let result: (call: String, code: CInt) = spawnLock.withLock { _ in
            for index in 0..<3 where plumbing[index] == .pipe {
                if pipe(&pipes[index]) != 0 { return ("pipe", errno) }
                for fd in pipes[index] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            if let directory {
                guard let addChdir = GNUSpawn.addChdir else { return ("posix_spawn_file_actions_addchdir_np", ENOSYS) }
                let code = addChdir(&actions, directory)
                if code != 0 { return ("posix_spawn_file_actions_addchdir_np", code) }
            }
            for (fd, how) in plumbing.enumerated() {
                let target = CInt(fd)
                switch how {
                case .null:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
                case .pipe:
                    // The child reads the read end of its stdin, writes the write ends of the others.
                    posix_spawn_file_actions_adddup2(&actions, pipes[fd][fd == 0 ? 0 : 1], target)
                case .output:
                    posix_spawn_file_actions_adddup2(&actions, 1, target)
                }
            }
            // Whatever this process opened without close-on-exec (a test's socket, a library's
            // descriptor) stays here.
            if let closeFrom = GNUSpawn.addCloseFrom { _ = closeFrom(&actions, 3) }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
            if newProcessGroup { flags |= POSIX_SPAWN_SETPGROUP }
            posix_spawnattr_setflags(&attributes, Int16(flags))
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
            return ("posix_spawn", posix_spawn(&pid, path, &actions, &attributes, argv, envp))
        }
        // The child's ends are its own now (or nobody's).
        for index in 0..<3 {
            let childEnd = pipes[index][index == 0 ? 0 : 1]
            if childEnd >= 0 { close(childEnd) }
        }
        let ours = (0..<3).map { pipes[$0][$0 == 0 ? 1 : 0] }
        guard result.code == 0 else {
            for fd in ours where fd >= 0 { close(fd) }
            throw failure(result, path: path, directory: directory)
        }
        return Spawned(pid: pid, input: ours[0], output: ours[1], error: ours[2])
    }

    /// The error of a spawn that failed: `posix_spawn` reports a directory it could not enter
    /// as it reports a missing program, so the directory is looked at first.
    private static func failure(_ result: (call: String, code: CInt), path: String, directory: String?) -> Errno {
        guard result.call == "posix_spawn" else {
            return Errno(result.code, call: result.call, path: result.call == "pipe" ? nil : directory)
        }
        if let directory, [ENOENT, EACCES, ENOTDIR].contains(result.code) {
            var status = stat()
            if stat(directory, &status) != 0 { return Errno(errno, call: "chdir", path: directory) }
            if status.st_mode & S_IFMT != S_IFDIR { return Errno(ENOTDIR, call: "chdir", path: directory) }
            if access(directory, X_OK) != 0 { return Errno(errno, call: "chdir", path: directory) }
        }
        return Errno(result.code, call: "posix_spawn", path: path)
    }
}

/// glibc's spawn file actions that its headers declare only with `_GNU_SOURCE` (which Swift's
/// Glibc module does not define): looked up once by name; nil in a C library without them.
private enum GNUSpawn {
    typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> CInt
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, CInt) -> CInt

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29).
    static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")

    private static func symbol<T>(_ name: String) -> T? {
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(pointer, to: T.self)
    }
}
