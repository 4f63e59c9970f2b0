import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of threads, all created when the pool is made, that run blocking jobs (a
/// resolver call, an HTTP check) with a bounded queue.
///
/// Nothing here depends on a thread being created later: Foundation's `Thread.start()` ignores
/// a failed `pthread_create` (under `TasksMax=` or `ulimit -u` it fails silently, and the work
/// it was to do never runs). The pool calls `pthread_create` itself, once per thread, and knows
/// how many it got; `submit` says at once when a job cannot be taken (no thread, queue full),
/// so the caller can answer instead of waiting for ever.
public final class WorkerPool: @unchecked Sendable {
    /// The pool `HostResolver` and `HostChecker` use unless given another (an app's in-process
    /// checks, tests; reachd makes its own, sized by `[Limits] MaxChecksInFlight=`): created on
    /// first use, 4 threads with room for 12 waiting.
    public static let lookups = WorkerPool(name: "reachd-lookup", threads: 4, maxQueued: 12)

    public let name: String
    /// Threads actually created (fewer than asked when `pthread_create` failed).
    public let threadCount: Int
    private let state: State

    /// - Parameters:
    ///   - threads: how many threads to create now.
    ///   - maxQueued: jobs that may wait for a free thread; more are refused.
    public init(name: String, threads: Int, maxQueued: Int) {
        self.name = name
        state = State(maxQueued: maxQueued)
        var created = 0
        for _ in 0..<max(threads, 0) {
            if Self.spawn(state) { created += 1 } else { break }
        }
        threadCount = created
        state.lock.withLock { state.threads = created }
    }

    deinit {
        // The threads hold the state, not the pool: they finish what is queued and exit.
        state.lock.withLock {
            state.stopping = true
            state.lock.broadcast()
        }
    }

    /// Queues `job` for a thread of the pool; false when it cannot be taken (the pool has no
    /// thread, or `maxQueued` jobs already wait), and then it never runs.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        state.lock.withLock {
            guard state.threads > 0, !state.stopping else { return false }
            // A job waits only when no thread is idle.
            guard state.jobs.count - state.idle < state.maxQueued else { return false }
            state.jobs.append(job)
            state.lock.signal()
            return true
        }
    }

    /// Jobs running or waiting now.
    public var load: Int {
        state.lock.withLock { state.jobs.count + (state.threads - state.idle) }
    }

    private static func spawn(_ state: State) -> Bool {
        let box = Unmanaged.passRetained(state)
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // Resolver calls (NSS modules included) need little stack; 512 KiB of address space per
        // thread, of which an idle one touches a few pages.
        pthread_attr_setstacksize(&attributes, 512 * 1024)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let rc = pthread_create(&thread, &attributes, { argument in
            let state = Unmanaged<State>.fromOpaque(argument!).takeRetainedValue()
            state.run()
            return nil
        }, box.toOpaque())
        if rc != 0 {
            box.release()
            return false
        }
        return true
    }

    /// What the threads share.
    final class State: @unchecked Sendable {
        let lock = NSCondition()
        var jobs: [@Sendable () -> Void] = []
        var threads = 0
        var idle = 0
        var stopping = false
        let maxQueued: Int

        init(maxQueued: Int) { self.maxQueued = max(maxQueued, 0) }

        func run() {
            while true {
                lock.lock()
                idle += 1
                while jobs.isEmpty && !stopping { lock.wait() }
                idle -= 1
                if jobs.isEmpty {   // stopping, nothing left
                    threads -= 1
                    lock.unlock()
                    return
                }
                let job = jobs.removeFirst()
                lock.unlock()
                job()
            }
        }
    }
}
