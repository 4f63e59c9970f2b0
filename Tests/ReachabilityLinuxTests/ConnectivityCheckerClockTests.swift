import Foundation
import ReachabilityCore
import ReachabilityLinux
import Testing
import TestSupport

/// A clock the test moves by hand: the wall clock steps apart from the one timers run on.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var reading: ClockReading

    init(_ reading: ClockReading = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 1_000)) {
        self.reading = reading
    }

    var clock: ReachdClock { ReachdClock { [self] in lock.withLock { reading } } }
    /// Someone sets the date.
    func stepWall(by seconds: TimeInterval) { lock.withLock { reading = reading.steppingWall(by: seconds) } }
    /// Time passes.
    func advance(by seconds: TimeInterval) { lock.withLock { reading = reading.adding(seconds) } }
}

extension ConnectivitySystemTests {
@Suite struct ConnectivityCheckerClockTests {
    /// The wall clock steps an hour ahead and back while the checker runs: no check starts, no
    /// timer is armed or fired, manual requests share the fresh verdict as before (the server
    /// sees no request more). Then the clock the timers read moves past `ProbeMinInterval=` and
    /// the next request checks again, rescheduled with the same interval.
    @Test(.needsRoot()) func wallClockStepChangesNothing() throws {
        let lab = try ProbeLab(mode: .noContent)
        defer { lab.destroy() }
        let target = FakeProbeTarget(status: labStatus(lab))
        var configuration = checkerConfiguration(lab, interval: 60)
        configuration.probeMinInterval = 30
        let clock = ManualClock()
        let checker = ConnectivityChecker(configuration: configuration, target: target,
                                          networkNamespace: lab.host.name, clock: clock.clock)
        let actions = Collector<ProbeScheduler.Action>()
        checker.observeActions { actions.append($0) }
        checker.start()
        defer { checker.stop() }
        #expect(waitUntil(timeout: 15) { target.results == [.full] })
        #expect(waitUntil(timeout: 5) { actions.values.contains { if case .schedule(60, _) = $0 { true } else { false } } })
        #expect(lab.server.requests.count == 1)
        let before = actions.values.count
        let verdict = try #require(target.probes.first ?? nil)

        let replies = Collector<ConnectivityChecker.Reply>()
        for step in [3600.0, -7200.0] {
            clock.stepWall(by: step)
            checker.statusChanged(labStatus(lab))
            checker.probeNow { replies.append($0) }
        }
        #expect(waitUntil(timeout: 5) { replies.values.count == 2 })
        #expect(replies.values == [.probe(verdict), .probe(verdict)])
        // Exactly the two replies: nothing started, cancelled, armed or published in between.
        #expect(Array(actions.values[before...]) == [.reply(requests: [1], .probe(verdict)), .reply(requests: [2], .probe(verdict))])
        #expect(lab.server.requests.count == 1)
        #expect(target.results == [.full])

        clock.advance(by: 31)
        checker.probeNow { replies.append($0) }
        #expect(waitUntil(timeout: 15) { replies.values.count == 3 })
        #expect(lab.server.requests.count == 2)
        #expect(waitUntil(timeout: 5) {
            actions.values[before...].filter { if case .schedule(60, _) = $0 { true } else { false } }.count == 1
        })
    }
}
}
