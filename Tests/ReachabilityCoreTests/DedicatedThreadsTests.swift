import Dispatch
import Foundation
import Testing
import TestSupport

/// The trait the system suites run under: their tests may block as long as they like without
/// taking a thread from Swift's cooperative pool (one per core), and without holding up one
/// another.
@Suite(.dedicatedThreads) struct DedicatedThreadsTests {
    /// Read from a synchronous context (`Thread.current` is not for async code).
    private static func onPoolThread() -> Bool { BlockingThreadPool.isCurrentThreadInPool }

    @Test func aSynchronousTestRunsOnThePoolsThreads() {
        #expect(Self.onPoolThread())
    }

    /// More jobs than cores, each blocked until all of them have started: on the cooperative
    /// pool the last ones would never start (each wait runs out after 10 s); here every job
    /// gets a thread, so all of them meet.
    @Test func blockedJobsNeverHoldUpOthers() async {
        let count = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let arrived = DispatchGroup()
        for _ in 0..<count { arrived.enter() }
        let met = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    arrived.leave()
                    return arrived.wait(timeout: .now() + 10) == .success
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(met == Array(repeating: true, count: count))
        #expect(Self.onPoolThread())
    }
}
