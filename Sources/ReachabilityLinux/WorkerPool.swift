import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bounded set of threads that run blocking jobs (a resolver call, an HTTP check) with a
/// bounded queue: all created when the pool is made (`eager`), or as jobs need them.
///
/// No job depends on a thread being created: Foundation's `Thread.start()` ignores a failed
/// `pthread_create` (under `TasksMax=` or `ulimit -u` it fails silently, and the work it was to
/// do never runs). The pool calls `pthread_create` itself and knows how many threads it has;
/// `submit` says at once when a job cannot be taken (no thread could be made, queue full), so
/// the caller can answer instead of waiting for ever.
public final class WorkerPool: @unchecked Sendable {
    /// The pool `HostResolver` and `HostChecker` use unless given another (an app's in-process
    /// checks, tests; reachd makes its own, sized by `[Limits] MaxChecksInFlight=`): up to 4
    /// threads, made as needed, with room for 12 jobs waiting.
    public static let lookups = WorkerPool(name: "reachd-lookup", threads: 4, maxQueued: 12, eager: false)

    public let name: String
    /// The most threads the pool runs.
    public let maxThreads: Int
    private let state: State

    /// - Parameters:
    ///   - threads: the most threads the pool runs.
    ///   - maxQueued: jobs that may wait for a free thread; more are refused.
    ///   - eager: create every thread now (capacity that nothing later can take away, for the
    ///     connectivity check); otherwise threads are made as jobs need them, and a job that
    ///     finds no idle thread and cannot get a new one waits only if some thread exists.
    public init(name: String, threads: Int, maxQueued: Int, eager: Bool = true) {
        self.name = name
        maxThreads = max(threads, 0)
        state = State(maxQueued: maxQueued)
        guard eager else { return }
        for _ in 0..<maxThreads {
            guard Self.spawn(state) else { break }
        }
    }

    /// Threads created so far (fewer than asked when `pthread_create` failed).
    public var threadCount: Int { state.lock.withLock { state.threads } }

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
        submitCancellable(job) != nil
    }

    /// As `submit`; the ticket lets `withdraw` take the job back while it still waits.
    public func submitCancellable(_ job: @escaping @Sendable () -> Void) -> Int? {
        state.lock.lock()
        defer { state.lock.unlock() }
        guard !state.stopping else { return nil }
        // Threads not running a job (idle, or just made) take the waiting jobs first; a job
        // beyond them needs a new thread, or a place in the queue.
        if state.jobs.count >= state.threads - state.running && state.threads < maxThreads {
            _ = Self.spawn(state, locked: true)
        }
        guard state.threads > 0, state.jobs.count < state.threads - state.running + state.maxQueued else { return nil }
        state.nextTicket += 1
        state.jobs.append((state.nextTicket, job))
        state.lock.signal()
        return state.nextTicket
    }

    /// Takes a waiting job out of the queue (its caller gave up); false when it already started
    /// (or ran).
    @discardableResult
    public func withdraw(_ ticket: Int) -> Bool {
        state.lock.withLock {
            guard let index = state.jobs.firstIndex(where: { $0.ticket == ticket }) else { return false }
            state.jobs.remove(at: index)
            return true
        }
    }

    /// Jobs running or waiting now.
    public var load: Int {
        state.lock.withLock { state.jobs.count + state.running }
    }

    /// Starts one thread; counts it in `state.threads` (under the lock, which `locked` says the
    /// caller holds).
    private static func spawn(_ state: State, locked: Bool = false) -> Bool {
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
        if locked { state.threads += 1 } else { state.lock.withLock { state.threads += 1 } }
        return true
    }

    /// What the threads share.
    final class State: @unchecked Sendable {
        let lock = NSCondition()
        var jobs: [(ticket: Int, job: @Sendable () -> Void)] = []
        var nextTicket = 0
        var threads = 0
        /// Threads running a job now.
        var running = 0
        var stopping = false
        let maxQueued: Int

        init(maxQueued: Int) { self.maxQueued = max(maxQueued, 0) }

        func run() {
            lock.lock()
            while true {
                while jobs.isEmpty && !stopping { lock.wait() }
                if jobs.isEmpty {   // stopping, nothing left
                    threads -= 1
                    lock.unlock()
                    return
                }
                let job = jobs.removeFirst().job
                running += 1
                lock.unlock()
                job()
                lock.lock()
                running -= 1
            }
        }
    }
}
