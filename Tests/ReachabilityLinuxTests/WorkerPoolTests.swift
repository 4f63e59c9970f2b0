import Foundation
import ReachabilityLinux
import Synchronization
import ReachabilityCore
import Testing

@Suite struct WorkerPoolTests {
    /// Jobs beyond the threads wait, up to `maxQueued`; more are refused at once (never
    /// accepted and then left unrun).
    @Test(arguments: [true, false])
    func boundedThreadsAndQueue(eager: Bool) {
        let pool = WorkerPool(name: "test", threads: 2, maxQueued: 3, eager: eager)
        #expect(pool.threadCount == (eager ? 2 : 0))
        let release = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        var accepted = 0
        for _ in 0..<8 {
            if pool.submit({ release.wait(); ran.withLock { $0 += 1 }; finished.signal() }) { accepted += 1 }
        }
        #expect(accepted == 5)   // 2 running, 3 waiting
        #expect(pool.threadCount == 2)
        for _ in 0..<5 { release.signal() }
        let deadline = DispatchTime.now() + 10
        for _ in 0..<5 { _ = finished.wait(timeout: deadline) }
        #expect(ran.withLock { $0 } == 5)
        let again = pool.submit({})
        #expect(again)
    }

    @Test func aPoolWithoutThreadsRefuses() {
        let pool = WorkerPool(name: "none", threads: 0, maxQueued: 10)
        let taken = pool.submit({ Issue.record("ran without a thread") })
        #expect(!taken)
    }
}

@Suite struct HostCheckerPoolTests {
    /// With every thread held by hanging look-ups, a check is answered within the resolver's
    /// timeout (Busy), and a caller that gives up takes its waiting check out of the queue.
    @Test func aCheckWaitingForAThreadIsAnsweredAndCanBeWithdrawn() async throws {
        let release = DispatchSemaphore(value: 0)
        defer { for _ in 0..<4 { release.signal() } }
        let pool = WorkerPool(name: "test-checks", threads: 1, maxQueued: 2)
        var resolverConfiguration = HostResolver.Configuration()
        resolverConfiguration.timeout = 0.3
        let hanging = DispatchSemaphore(value: 0)
        let resolver = HostResolver(configuration: resolverConfiguration, lookup: { _ in
            hanging.signal(); release.wait(); return .success(["192.0.2.1"])
        }, pool: pool)
        let checker = HostChecker(resolver: resolver, pool: pool)
        let status = Status.initial(since: Date())
        // The one thread hangs on a name.
        checker.check(host: "hang.test", port: nil, status: { status }) { _ in }
        #expect(hanging.wait(timeout: .now() + 10) == .success)
        // A literal waits for that thread: after the timeout it is told Busy.
        let waited = await checker.check(host: "192.0.2.7", port: nil, status: status)
        #expect(waited.failureValue == .busy(reason: "no look-up thread free within 0.3 s"))
        // A waiting check whose caller hangs up leaves the queue at once.
        let given = checker.check(host: "192.0.2.8", port: nil, status: { status }) { _ in Issue.record("answered after cancel") }
        given.cancel()
        let a = pool.submit({}), b = pool.submit({})
        #expect(a && b)   // both queue places are free again
    }
}
