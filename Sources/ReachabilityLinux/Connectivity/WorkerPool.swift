import Dispatch
import FoundationEssentials
import ReachabilitySystem
import Synchronization

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
            state.shared.withLock { $0.threads += 1 }
        }
    }

    /// Threads created so far (fewer than asked when `pthread_create` failed).
    public var threadCount: Int { state.shared.withLock { $0.threads } }

    deinit {
        // The threads hold the state, not the pool: they finish what is queued and exit.
        let idle = state.shared.withLock { shared in
            shared.stopping = true
            defer { shared.idle = 0 }
            return shared.idle
        }
        for _ in 0..<idle { state.wakeUp.signal() }
    }

    /// Queues `job` for a thread of the pool; false when it cannot be taken (the pool has no
    /// thread, or `maxQueued` jobs already wait), and then it never runs.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        submitCancellable(job) != nil
    }

    /// As `submit`; the ticket lets `withdraw` take the job back while it still waits.
    public func submitCancellable(_ job: @escaping @Sendable () -> Void) -> Int? {
        let state = self.state
        let maxThreads = self.maxThreads
        let (ticket, wake) = state.shared.withLock { shared -> (Int?, Bool) in
            guard !shared.stopping else { return (nil, false) }
            // Threads not running a job (idle, or just made) take the waiting jobs first; a job
            // beyond them needs a new thread, or a place in the queue.
            if shared.jobs.count >= shared.threads - shared.running && shared.threads < maxThreads && Self.spawn(state) {
                shared.threads += 1
            }
            guard shared.threads > 0, shared.jobs.count < shared.threads - shared.running + state.maxQueued else { return (nil, false) }
            shared.nextTicket += 1
            shared.jobs.append((shared.nextTicket, job))
            guard shared.idle > 0 else { return (shared.nextTicket, false) }
            shared.idle -= 1
            return (shared.nextTicket, true)
        }
        if wake { state.wakeUp.signal() }
        return ticket
    }

    /// Takes a waiting job out of the queue (its caller gave up); false when it already started
    /// (or ran).
    @discardableResult
    public func withdraw(_ ticket: Int) -> Bool {
        state.shared.withLock { shared in
            guard let index = shared.jobs.firstIndex(where: { $0.ticket == ticket }) else { return false }
            shared.jobs.remove(at: index)
            return true
        }
    }

    /// Jobs running or waiting now.
    public var load: Int {
        state.shared.withLock { $0.jobs.count + $0.running }
    }

    /// Starts one thread; the caller counts it in `threads`.
    private static func spawn(_ state: State) -> Bool {
        do {
            // Resolver calls (NSS modules included) need little stack; 512 KiB of address space
            // per thread, of which an idle one touches a few pages.
            try DetachedThread.start(stackSize: 512 * 1024) { state.run() }
            return true
        } catch {
            return false
        }
    }

    /// What the threads share.
    final class State: Sendable {
        struct Shared {
            var jobs: [(ticket: Int, job: @Sendable () -> Void)] = []
            var nextTicket = 0
            var threads = 0
            /// Threads running a job now.
            var running = 0
            /// Threads waiting on `wakeUp`, each owed one signal when a job comes (or on stop).
            var idle = 0
            var stopping = false
        }
        let shared = Mutex(Shared())
        /// Wakes idle threads: signalled once per thread taken off `idle`.
        let wakeUp = DispatchSemaphore(value: 0)
        let maxQueued: Int

        init(maxQueued: Int) { self.maxQueued = max(maxQueued, 0) }

        private enum Step {
            case run(@Sendable () -> Void)
            case wait
            case exit
        }

        func run() {
            var finishedJob = false
            while true {
                let step = shared.withLock { shared -> Step in
                    if finishedJob { shared.running -= 1 }
                    if !shared.jobs.isEmpty {
                        shared.running += 1
                        return .run(shared.jobs.removeFirst().job)
                    }
                    if shared.stopping {   // nothing left
                        shared.threads -= 1
                        return .exit
                    }
                    shared.idle += 1
                    return .wait
                }
                switch step {
                case .run(let job):
                    job()
                    finishedJob = true
                case .wait:
                    finishedJob = false
                    wakeUp.wait()
                case .exit:
                    return
                }
            }
        }
    }
}
