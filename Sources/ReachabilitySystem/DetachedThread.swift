#if canImport(Glibc)
import Glibc
#endif

/// Threads of the process's own, for the loops that must not wait for Dispatch's pool (a reader
/// blocked in `poll(2)`, a bounded worker pool, a client's blocking subscription).
public enum DetachedThread {
    /// Runs `body` on a new detached thread (`pthread_create(3)` with
    /// `PTHREAD_CREATE_DETACHED`). `name` (at most 15 bytes; a longer one is not set) shows in
    /// `top -H`, `perf` and /proc; `stackSize` in bytes, nil for the default.
    ///
    /// - Throws: `Errno` from `pthread_create` (EAGAIN under `TasksMax=` or `ulimit -u`); `body`
    ///   then never runs.
    public static func start(name: String? = nil, stackSize: Int? = nil,
                             _ body: @escaping @Sendable () -> Void) throws(Errno) {
        let result = create(Context(name: name, body: body), stackSize: stackSize)
        guard result == 0 else { throw Errno(result, call: "pthread_create") }
    }

    /// `pthread_create`'s result; the context is released here when no thread took it.
    private static func create(_ context: Context, stackSize: Int?) -> CInt {
        let retained = Unmanaged.passRetained(context)
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        let result = pthread_create(&thread, &attributes, threadMain, retained.toOpaque())
        if result != 0 { retained.release() }
        return result
    }

    /// The new thread's start routine: takes its context back, names itself, runs the body.
    private static let threadMain: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { argument in
        guard let argument else { return nil }
        let context = Unmanaged<Context>.fromOpaque(argument).takeRetainedValue()
        if let name = context.name { nameCallingThread(name) }
        context.body()
        return nil
    }

    private final class Context: Sendable {
        let name: String?
        let body: @Sendable () -> Void
        init(name: String?, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }

    /// What `pthread_setname_np(pthread_self(), name)` does (Glibc hides it without
    /// `_GNU_SOURCE`): writes /proc/thread-self/comm.
    private static func nameCallingThread(_ name: String) {
        let bytes = Array(name.utf8)
        guard bytes.count <= 15 else { return }
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
