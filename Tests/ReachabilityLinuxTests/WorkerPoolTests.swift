import Foundation
import ReachabilityLinux
import Synchronization
import Testing

@Suite struct WorkerPoolTests {
    /// Jobs beyond the threads wait, up to `maxQueued`; more are refused at once (never
    /// accepted and then left unrun).
    @Test(arguments: [true, false])
    func boundedThreadsAndQueue(eager: Bool) {
        let pool = WorkerPool(name: "test", threads: 2, maxQueued: 3, eager: eager)
        #expect(pool.threadCount == (eager ? 2 : 0))
        let release = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        var accepted = 0
        for _ in 0..<8 {
            if pool.submit({ release.wait(); ran.withLock { $0 += 1 } }) { accepted += 1 }
        }
        #expect(accepted == 5)   // 2 running, 3 waiting
        #expect(pool.threadCount == 2)
        for _ in 0..<5 { release.signal() }
        let deadline = Date().addingTimeInterval(10)
        while ran.withLock({ $0 }) < 5 && Date() < deadline { usleep(10_000) }
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
