#if canImport(Glibc)
import Glibc
#endif

/// Process-wide settings and calls of the daemon and the CLI.
public enum ProcessSetup {
    /// Ignores SIGPIPE, so a write to a vanished client is an EPIPE error and not the end of the
    /// daemon (`signal(2)`). The server also sends with MSG_NOSIGNAL.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises the soft RLIMIT_NOFILE to the hard limit (`getrlimit(2)`, `setrlimit(2)`), so a
    /// thousand subscribers do not run out of descriptors. Returns the new soft limit.
    @discardableResult
    public static func raiseFileDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(CInt(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }

    /// This process's id (`getpid(2)`).
    public static var processID: Int32 { getpid() }

    /// The user id this process acts as (`geteuid(2)`).
    public static var effectiveUserID: UInt32 { geteuid() }

    /// Ends the process with `status` (`exit(3)`: atexit handlers run, stdio is flushed).
    public static func exit(_ status: CInt) -> Never {
        Glibc.exit(status)
    }

    /// Sleeps `seconds` whole, also when signals cut `sleep(3)` short.
    public static func sleep(seconds: UInt32) {
        var left = seconds
        while left > 0 { left = Glibc.sleep(left) }
    }

    /// Hands freed heap memory back to the system (glibc's `malloc_trim(3)`, which the Glibc
    /// module does not export; looked up with `dlsym(3)`). Does nothing where it is missing.
    public static func trimMemory() {
        _ = trimMalloc?(0)
    }

    private static let trimMalloc: (@convention(c) (Int) -> CInt)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> CInt).self)
    }()
}

/// The signals reachd and reachctl handle, by their C names.
public enum Signal: Sendable, CaseIterable {
    /// `SIGHUP`, `SIGINT`, `SIGTERM`.
    case hangup, interrupt, terminate

    /// The C number (`SIGHUP`, `SIGINT`, `SIGTERM`), for `DispatchSource.makeSignalSource`.
    public var number: CInt {
        switch self {
        case .hangup: return SIGHUP
        case .interrupt: return SIGINT
        case .terminate: return SIGTERM
        }
    }

    /// `SIGHUP`, `SIGINT`, `SIGTERM`.
    public var name: String {
        switch self {
        case .hangup: return "SIGHUP"
        case .interrupt: return "SIGINT"
        case .terminate: return "SIGTERM"
        }
    }

    /// Sets the disposition to ignore (`signal(2)` with `SIG_IGN`), so that a Dispatch signal
    /// source sees it instead of the default action ending the process.
    public func ignore() {
        _ = Glibc.signal(number, SIG_IGN)
    }
}
