import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import TestSupport
import Testing

/// What a subscription's callbacks saw, filled on its thread.
private final class SubscriptionRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [ReachabilityEvent] = []
    private var _ends: [any Error] = []

    var events: [ReachabilityEvent] { lock.withLock { _events } }
    var ends: [any Error] { lock.withLock { _ends } }

    func subscribe(_ client: ReachabilityClient, waitForDaemon: Bool = false, reconnect: Bool) -> ReachabilityClient.EventSubscription {
        client.subscribe(waitForDaemon: waitForDaemon, reconnect: reconnect,
                         onEvent: { event in
                             self.lock.withLock { self._events.append(event) }
                         },
                         onEnd: { error in self.lock.withLock { self._ends.append(error) } })
    }
}

/// The callback form of the client's subscription (`ReachabilityClient.subscribe`), which the
/// app library uses directly and `events()` wraps.
@Suite struct EventSubscriptionTests {
    @Test func withoutReconnectTheEndIsReportedOnceWithTheError() throws {
        let h = try ServerHarness(sequence: 200)
        let recorder = SubscriptionRecorder()
        let subscription = recorder.subscribe(ReachabilityClient(socketPath: h.path), reconnect: false)
        defer { subscription.cancel() }
        #expect(waitUntil(timeout: 10) { recorder.events.count == 1 })
        let change = h.publishChange()
        #expect(waitUntil(timeout: 10) { recorder.events.count == 2 })
        #expect(recorder.events.map(\.sequence) == [200, change.sequence])

        h.server.stop()
        #expect(waitUntil(timeout: 10) { !recorder.ends.isEmpty })
        #expect(recorder.ends.count == 1)
        #expect(recorder.ends.first as? ReachabilityClientError == .connectionClosed)
    }

    @Test func withoutADaemonTheEndIsDaemonNotRunning() throws {
        let directory = try temporaryDirectory()
        let recorder = SubscriptionRecorder()
        let subscription = recorder.subscribe(ReachabilityClient(socketPath: directory + "/none"), reconnect: true)
        defer { subscription.cancel() }
        #expect(waitUntil(timeout: 10) { !recorder.ends.isEmpty })
        #expect(recorder.ends.first as? ReachabilityClientError == .daemonNotRunning(socketPath: directory + "/none"))
        #expect(recorder.events.isEmpty)
    }

    @Test func waitForDaemonWaitsForTheFirstServer() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/io.reachd.Reachability"
        let recorder = SubscriptionRecorder()
        let subscription = recorder.subscribe(ReachabilityClient(socketPath: path), waitForDaemon: true, reconnect: false)
        defer { subscription.cancel() }
        let server = ReachabilityServer(initial: Fixture.initial(sequence: 7))
        defer { server.stop() }
        try server.listen(at: path)
        #expect(waitUntil(timeout: 10) { recorder.events.count == 1 })
        #expect(recorder.events.first?.sequence == 7)
        #expect(recorder.ends.isEmpty)
    }

    /// The `initial` event a subscriber gets is timed by the clock the server was given (the
    /// daemon's), not the machine's wall clock.
    @Test func theInitialEventIsTimedByTheInjectedClock() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/io.reachd.Reachability"
        let wall = Date(timeIntervalSince1970: 1_000_000_000)
        let server = ReachabilityServer(initial: Fixture.initial(sequence: 9),
                                        clock: ReachdClock { ClockReading(wall: wall, uptime: 42) })
        defer { server.stop() }
        try server.listen(at: path)
        let recorder = SubscriptionRecorder()
        let subscription = recorder.subscribe(ReachabilityClient(socketPath: path), reconnect: false)
        defer { subscription.cancel() }
        #expect(waitUntil(timeout: 10) { recorder.events.count == 1 })
        #expect(recorder.events.first?.event == .initial)
        #expect(recorder.events.first?.timestamp == wall)
    }

    /// After `cancel()` the connection goes, nothing more is delivered and `onEnd` is not called.
    @Test func cancelEndsQuietly() throws {
        let h = try ServerHarness(sequence: 300)
        let recorder = SubscriptionRecorder()
        var subscription: ReachabilityClient.EventSubscription? = recorder.subscribe(ReachabilityClient(socketPath: h.path),
                                                                                    reconnect: true)
        weak let released = subscription
        #expect(waitUntil(timeout: 10) { recorder.events.count == 1 && h.server.subscriberCount == 1 })
        subscription?.cancel()
        subscription = nil
        #expect(waitUntil(timeout: 10) { h.server.connectionCount == 0 })
        // The subscription's thread holds it while it runs: once it is released, the thread has
        // returned, and nothing is left that could deliver, call `onEnd` or reconnect.
        #expect(waitUntil(timeout: 10) { released == nil })
        h.publishChange()
        h.server.stop()
        // A subscription that was not cancelled would reconnect to this one.
        let second = ReachabilityServer(initial: Fixture.initial(sequence: 400))
        defer { second.stop() }
        try second.listen(at: h.path)
        #expect(second.connectionCount == 0)
        #expect(recorder.events.map(\.sequence) == [300])
        #expect(recorder.ends.isEmpty)
    }
}
