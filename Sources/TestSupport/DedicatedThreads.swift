import Foundation
import Testing

/// Runs every test under a suite on threads of the test process's own instead of Swift's
/// cooperative pool.
///
/// The cooperative pool has one thread per core (two on a small CI machine), and a test that
/// blocks (a namespace made with `ip`, `Child.wait`, `waitUntil`, a daemon's start) holds its
/// thread for the whole wait. Two such tests, in two serialized lines, held both: the other
/// lines and every async test, whose `Task.sleep` or continuation needs a free cooperative
/// thread to resume, waited for them. Under this trait a test's synchronous body and each of
/// its resumptions run on `BlockingThreadPool`, which never makes a job wait for another.
///
/// ```swift
/// @Suite(.serialized, .dedicatedThreads) struct SystemTests {}
/// ```
public struct DedicatedThreads: SuiteTrait, TestTrait, TestScoping {
    /// Every suite and test under the suite gets it.
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        // A child task that prefers the pool is enqueued on it from its start: the test's first
        // line runs there, not on the cooperative thread that runs this scope.
        // The group waits for the child, so `function` never outlives this call.
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(executorPreference: BlockingThreadPool.shared) {
                    try await function()
                }
                try await group.waitForAll()
            }
        }
    }
}

extension Trait where Self == DedicatedThreads {
    /// The tests run on threads that may block (see `DedicatedThreads`).
    public static var dedicatedThreads: Self { DedicatedThreads() }
}

/// A task executor for code that blocks: a job never waits for another one to end, since a
/// thread is started whenever every thread is busy. Idle threads wait for the next job; there
/// are never more than the most jobs that ran at once (a handful: one per serialized line and
/// the child tasks of its test).
public final class BlockingThreadPool: TaskExecutor, @unchecked Sendable {
    public static let shared = BlockingThreadPool()

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var next = 0
    /// Threads waiting for a job (a thread signalled but not yet awake still counts).
    private var idle = 0

    private init() {}

    private static let marker = "reachd.BlockingThreadPool"

    /// True on the pool's threads (for tests of the trait).
    public static var isCurrentThreadInPool: Bool {
        Thread.current.threadDictionary[marker] != nil
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // More jobs waiting than threads waiting: no job may depend on a busy thread.
        let start = jobs.count - next > idle
        if !start { condition.signal() }
        condition.unlock()
        if start {
            Thread { [self] in work() }.start()
        }
    }

    private func work() {
        // Named from inside: on Linux a name set before `start()` is lost, and the thread would
        // show its creator's (a cooperative thread's) name.
        Thread.current.name = "test-blocking"
        Thread.current.threadDictionary[Self.marker] = true
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count { jobs.removeAll(keepingCapacity: true); next = 0 }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
