import Testing
@testable import ReachabilityCore

@Suite struct SystemBusStateTests {
    /// Connected at start: the followers start once the bus answers; nothing is said.
    @Test func connectsAndStartsTheFollowers() {
        var s = SystemBusState()
        #expect(s.start() == [.connect])
        #expect(s.start() == [])
        #expect(!s.isConnected)
        #expect(s.connected() == [.startFollowers])
        #expect(s.isConnected)
    }

    /// No bus at all: said once; tries every 0.1 s doubling, never more than 5 s apart.
    @Test func noBusIsRetriedWithBackOff() {
        var s = SystemBusState()
        _ = s.start()
        var waits: [Double] = []
        var said = 0
        for _ in 0..<12 {
            for action in s.failed() {
                switch action {
                case .retry(let seconds): waits.append(seconds)
                case .reportAbsent: said += 1
                case .connect, .startFollowers, .stopFollowers, .reportLost, .reportBack: Issue.record("\(action)")
                }
            }
            #expect(s.retryDue() == [.connect])
        }
        #expect(said == 1)
        #expect(waits == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5, 5, 5, 5, 5])
        #expect(waits.allSatisfy { $0 <= SystemBusState.maxDelay })
        // The bus appears at last: followed, and no "back" (it was never lost).
        #expect(s.connected() == [.startFollowers])
    }

    /// Lost after answering: the followers stop, one "lost"; tries back off while the bus is
    /// away; on return one "back", the followers start afresh and the delay starts over.
    @Test func aLostBusComesBack() {
        var s = SystemBusState()
        _ = s.start()
        _ = s.connected()
        #expect(s.lost() == [.stopFollowers, .reportLost, .retry(after: 0.1)])
        #expect(!s.isConnected)
        #expect(s.lost() == [])
        #expect(s.retryDue() == [.connect])
        #expect(s.failed() == [.retry(after: 0.2)])       // no second "lost", no "absent"
        #expect(s.retryDue() == [.connect])
        #expect(s.failed() == [.retry(after: 0.4)])
        #expect(s.retryDue() == [.connect])
        // Connected, then dropped before the bus answered (a dbus-daemon on its way up): a failure.
        #expect(s.lost() == [.retry(after: 0.8)])
        #expect(s.retryDue() == [.connect])
        #expect(s.connected() == [.reportBack, .startFollowers])
        #expect(s.delay == SystemBusState.firstDelay)
        // A second loss is said again.
        #expect(s.lost() == [.stopFollowers, .reportLost, .retry(after: 0.1)])
    }

    /// Stopped: the followers are told when they followed; a late timer or answer does nothing.
    @Test func stopping() {
        var s = SystemBusState()
        _ = s.start()
        _ = s.connected()
        #expect(s.stop() == [.stopFollowers])
        #expect(s.retryDue() == [] && s.connected() == [] && s.lost() == [])
        #expect(s.stop() == [])
        #expect(s.start() == [.connect])
    }
}
