import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ServiceInterfaceTests {
    @Test func getInfo() throws {
        let h = try ServerHarness()
        let reply = try h.connect().call(VarlinkCall(method: "org.varlink.service.GetInfo"))
        #expect(reply.parameters["vendor"] == .string("reachd"))
        #expect(reply.parameters["product"] == .string("reachd"))
        #expect(reply.parameters["version"]?.stringValue?.isEmpty == false)
        #expect(reply.parameters["url"]?.stringValue?.isEmpty == false)
        #expect(reply.parameters["interfaces"] == .array([.string("org.varlink.service"), .string("io.reachd.Reachability")]))
    }

    @Test func getInterfaceDescription() throws {
        let h = try ServerHarness()
        let c = try h.connect()
        let reply = try c.call(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": .string("io.reachd.Reachability")]))
        #expect(reply.parameters["description"] == .string(InterfaceDescription.reachability))
        #expect(throws: ReachabilityClientError.remote(.interfaceNotFound("org.example.Nope"))) {
            try c.call(VarlinkCall(method: "org.varlink.service.GetInterfaceDescription", parameters: ["interface": .string("org.example.Nope")]))
        }
    }

    @Test(arguments: [
        (VarlinkCall(method: "org.example.Nope.Do"), VarlinkError.interfaceNotFound("org.example.Nope")),
        (VarlinkCall(method: "io.reachd.Reachability.Nope"), VarlinkError.methodNotFound("io.reachd.Reachability.Nope")),
        (VarlinkCall(method: "org.varlink.service.Nope"), VarlinkError.methodNotFound("org.varlink.service.Nope")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe"), VarlinkError.expectedMore),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["after": .string("x")], more: true), VarlinkError.invalidParameter("after")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["statusOnly": .int(1)], more: true), VarlinkError.invalidParameter("statusOnly")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["changes": .string("status")], more: true), VarlinkError.invalidParameter("changes")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["changes": .array([.string("since")])], more: true), VarlinkError.invalidParameter("changes")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["changes": .array([.string("status"), .int(1)])], more: true), VarlinkError.invalidParameter("changes")),
        (VarlinkCall(method: "io.reachd.Reachability.Subscribe", parameters: ["changes": .array([])], more: true), VarlinkError.invalidParameter("changes")),
        (VarlinkCall(method: "io.reachd.Reachability.GetStatus", parameters: ["bogus": .null]), VarlinkError.invalidParameter("bogus")),
        (VarlinkCall(method: "io.reachd.Reachability.Check", parameters: [:]), VarlinkError.invalidParameter("host")),
        (VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("h"), "port": .int(70000)]), VarlinkError.invalidParameter("port")),
        (VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("h")]), VarlinkError.methodNotImplemented("io.reachd.Reachability.Check")),
        (VarlinkCall(method: "io.reachd.Reachability.Probe"), VarlinkError.probeDisabled),
        (VarlinkCall(method: "org.varlink.service.GetInterfaceDescription"), VarlinkError.invalidParameter("interface")),
    ])
    func standardErrors(call: VarlinkCall, expected: VarlinkError) throws {
        let h = try ServerHarness()
        let c = try h.connect()
        #expect(throws: ReachabilityClientError.remote(expected)) { try c.call(call) }
        // The connection stays usable after an error.
        #expect(try c.call(VarlinkCall(method: "io.reachd.Reachability.GetStatus")).parameters["status"] != nil)
    }

    @Test func pipelinedCallsAreAnsweredInOrder() throws {
        let h = try ServerHarness()
        let c = try h.connect()
        var bytes = Data()
        for method in ["org.varlink.service.GetInfo", "io.reachd.Reachability.Nope", "io.reachd.Reachability.GetStatus"] {
            bytes.append(try VarlinkCodec.encode(VarlinkCall(method: method))); bytes.append(0)
        }
        try c.write(bytes)
        #expect(try c.receive().parameters["vendor"] == .string("reachd"))
        #expect(try c.receive().error == "org.varlink.service.MethodNotFound")
        #expect(try c.receive().parameters["status"] != nil)
    }

    @Test func onewayCallsGetNoReply() throws {
        let h = try ServerHarness()
        let c = try h.connect()
        try c.send(VarlinkCall(method: "io.reachd.Reachability.GetStatus", oneway: true))
        try c.send(VarlinkCall(method: "org.varlink.service.GetInfo"))
        #expect(try c.receive().parameters["vendor"] == .string("reachd"))
    }
}

@Suite struct MethodHookTests {
    /// A handler's answer that cannot be encoded (NaN) is `InternalError`, and the connection
    /// goes on answering.
    @Test func anAnswerThatCannotBeEncodedIsInternalError() throws {
        let h = try ServerHarness()
        let broken = Probe(url: "http://10.0.0.1/", result: .full, rttMs: .nan, checkedAt: Date(timeIntervalSince1970: 1_800_000_000))
        h.server.probeHandler = { completion in completion(.reply("probe", broken)) }
        let c = try h.connect()
        #expect(throws: ReachabilityClientError.remote(.internalError)) {
            try c.call(VarlinkCall(method: "io.reachd.Reachability.Probe"))
        }
        #expect(try c.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] == .string("reachd"))
    }

    @Test func checkAndProbeHandlersAnswerAsynchronously() throws {
        let h = try ServerHarness()
        h.server.checkHandler = { host, port, completion in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                if host == "missing.example" { completion(.error(.hostNotFound(host))); return }
                completion(.parameters(Data(#"{"result":{"host":"\#(host)","port":\#(port ?? 0)}}"#.utf8)))
            }
            return nil
        }
        let probe = Probe(url: "http://10.0.0.1/", result: .full, httpStatus: 204, checkedAt: Date(timeIntervalSince1970: 1_800_000_000))
        h.server.probeHandler = { completion in
            completion(.reply("probe", probe))
        }
        let c = try h.connect()
        let check = try c.call(VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("example.com"), "port": .int(443)]))
        #expect(check.parameters["result"] == .object(["host": .string("example.com"), "port": .int(443)]))
        #expect(throws: ReachabilityClientError.remote(.hostNotFound("missing.example"))) {
            try c.call(VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("missing.example")]))
        }
        #expect(try c.call(VarlinkCall(method: "io.reachd.Reachability.Probe")).decode(Probe.self, key: "probe") == probe)
    }

    @Test func callsAfterASlowHandlerWaitTheirTurn() throws {
        let h = try ServerHarness()
        h.server.probeHandler = { completion in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { completion(.error(.probeDisabled)) }
        }
        let c = try h.connect()
        try c.send(VarlinkCall(method: "io.reachd.Reachability.Probe"))
        try c.send(VarlinkCall(method: "org.varlink.service.GetInfo"))
        #expect(try c.receive().error == "io.reachd.Reachability.ProbeDisabled")
        #expect(try c.receive().parameters["vendor"] == .string("reachd"))
    }
}

@Suite struct SubscriptionTests {
    @Test func getStatusFollowsPublishedEvents() throws {
        let h = try ServerHarness()
        let c = try h.connect()
        #expect(try c.call(VarlinkCall(method: "io.reachd.Reachability.GetStatus")).decode(Status.self, key: "status") == h.status)
        let event = h.publishChange()
        #expect(waitUntilTrue { (try? c.call(VarlinkCall(method: "io.reachd.Reachability.GetStatus")).decode(Status.self, key: "status")) == event.current })
    }

    @Test func initialThenChangesInOrder() throws {
        let h = try ServerHarness(sequence: 5000)
        let c = try h.connect()
        try c.subscribe()
        let initial = try c.nextEvent()
        #expect(initial.event == .initial && initial.reason.code == .initial && initial.previous == nil)
        #expect(initial.sequence == 5000 && initial.current == h.status)
        let published = (0..<3).map { _ in h.publishChange() }
        for expected in published {
            let event = try c.nextEvent()
            #expect(event == expected)
        }
    }

    @Test func resumeReplaysMissedEvents() throws {
        let h = try ServerHarness(sequence: 10)
        let published = (0..<5).map { _ in h.publishChange() }
        let c = try h.connect()
        // GetStatus on another connection orders us after the publishes on the server queue.
        _ = try h.connect().call(VarlinkCall(method: "io.reachd.Reachability.GetStatus"))
        try c.subscribe(after: 12)
        for expected in published.dropFirst(2) { #expect(try c.nextEvent() == expected) }
        let live = h.publishChange()
        #expect(try c.nextEvent() == live)
    }

    @Test(arguments: [3, 1, 999_999])
    func resumeBeyondTheHistoryResyncs(after: Int) throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.events.history = 2
        let h = try ServerHarness(sequence: 10, configuration: configuration)
        for _ in 0..<5 { h.publishChange() }
        _ = try h.connect().call(VarlinkCall(method: "io.reachd.Reachability.GetStatus"))
        let c = try h.connect()
        // 13 is gone from a history of 2 (it keeps 14 and 15); 999999 is from another run.
        try c.subscribe(after: after == 3 ? 12 : after)
        let event = try c.nextEvent()
        #expect(event.event == .initial && event.reason.code == .resync && event.previous == nil)
        #expect(event.sequence == 15 && event.current == h.status)
    }

    /// A filtered subscriber next to one without a filter (whose events go the direct way):
    /// each gets its own share.
    @Test func statusOnlySkipsMinorChanges() throws {
        let h = try ServerHarness()
        let c = try h.connect(), everything = try h.connect()
        try c.subscribe(statusOnly: true)
        try everything.subscribe()
        _ = try c.nextEvent()
        _ = try everything.nextEvent()
        let essential1 = h.publishChange()           // reachable
        let minor = h.publishChange(gatewayOnly: true) // gateway only: filtered
        let essential2 = h.publishChange()           // not reachable
        #expect(try c.nextEvent() == essential1)
        #expect(try c.nextEvent() == essential2)
        for event in [essential1, minor, essential2] { #expect(try everything.nextEvent() == event) }
    }

    /// `changes: [status]` gets only the events that change the status, each carrying its
    /// `changes`; the same filter applies to a replay after `after`.
    @Test func changesFilterLiveAndReplayed() throws {
        let h = try ServerHarness()
        let start = h.sequence
        let c = try h.connect()
        try c.subscribe(changes: ["status"])
        #expect(try c.nextEvent().changes == [])
        let gateway1 = h.publishChange(gatewayOnly: true)
        let flip1 = h.publishChange()
        let gateway2 = h.publishChange(gatewayOnly: true)
        let flip2 = h.publishChange()
        #expect(gateway1.changes == ["gateways"] && gateway2.changes == ["gateways"])
        #expect(flip1.changes.contains("status") && flip2.changes.contains("status"))
        let first = try c.nextEvent(), second = try c.nextEvent()
        #expect(first == flip1)
        #expect(second == flip2)
        #expect(first.changes == flip1.changes)

        // Replayed from the history: the same filter, by each event's own `changes`.
        let all = [gateway1, flip1, gateway2, flip2]
        let withGateways = all.filter { $0.changes.contains("gateways") }
        #expect(withGateways.map(\.sequence) == [gateway1, gateway2, flip2].map(\.sequence))
        let replay = try h.connect()
        try replay.subscribe(after: start, changes: ["gateways"])
        for expected in withGateways { #expect(try replay.nextEvent() == expected) }
        // statusOnly and changes add up.
        let both = try h.connect()
        try both.subscribe(after: start, statusOnly: true, changes: ["gateways"])
        for expected in all { #expect(try both.nextEvent() == expected) }
        // A marker that every one of them wants: it arrives next, so nothing else came between.
        let marker = h.publishChange()
        #expect(try c.nextEvent() == marker)
        #expect(try replay.nextEvent() == marker)
        #expect(try both.nextEvent() == marker)
    }

    @Test func publishedInitialWithANewNumberingResyncsSubscribers() throws {
        let h = try ServerHarness(sequence: 100)
        let c = try h.connect()
        try c.subscribe()
        _ = try c.nextEvent()
        let fresh = Fixture.status(reachable: true)
        h.server.publish(Fixture.initial(sequence: 9000, status: fresh))
        h.server.publish(Fixture.initial(sequence: 50, status: Fixture.status(reachable: false)))  // older: ignored
        let event = try c.nextEvent()
        #expect(event.event == .initial && event.reason.code == .resync && event.sequence == 9000 && event.current == fresh)
    }
}

@Suite struct RobustnessTests {
    @Test(arguments: ["garbage\0", "{\"method\":\0", "[1,2,3]\0", "{\"method\":\"\u{00e9}\"}\0"])
    func malformedMessagesCloseOnlyThatConnection(garbage: String) throws {
        let h = try ServerHarness()
        let good = try h.connect()
        try good.subscribe()
        _ = try good.nextEvent()
        let bad = try h.connect()
        // The connection works before the garbage: it is the garbage that closes it.
        #expect(try bad.call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] == .string("reachd"))
        var bytes = Data(garbage.utf8)
        if garbage.contains("\u{00e9}") {
            // Invalid UTF-8: a lone continuation byte in the method name.
            bytes = Data(#"{"method":""#.utf8) + Data([0xff]) + Data("\"}\0".utf8)
        }
        try bad.write(bytes)
        #expect(bad.isClosedByPeer())
        let event = h.publishChange()
        #expect(try good.nextEvent() == event)
        #expect(try h.connect().call(VarlinkCall(method: "org.varlink.service.GetInfo")).parameters["vendor"] == .string("reachd"))
    }

    @Test func oneMebibyteWithoutNULIsCutOff() throws {
        let h = try ServerHarness()
        let good = try h.connect()
        try good.subscribe()
        _ = try good.nextEvent()
        let bad = try h.connect()
        // The server closes while we are still writing: either the write or the read sees it.
        do { try bad.write(Data(repeating: 0x7b, count: 1 << 20)) } catch {}
        #expect(bad.isClosedByPeer())
        let event = h.publishChange()
        #expect(try good.nextEvent() == event)
    }

    @Test func truncatedMessagesAndAbruptDisconnectsChangeNothing() throws {
        let h = try ServerHarness()
        for _ in 0..<20 {
            let c = try h.connect()
            try c.write(Data(#"{"method":"io.reachd.Reachability.Subscr"#.utf8))
            c.close()
            let s = try h.connect()
            try s.subscribe()
            s.close()   // subscribed, then gone without a word
        }
        #expect(waitUntilTrue { h.server.connectionCount == 0 })
        let c = try h.connect()
        try c.subscribe()
        #expect(try c.nextEvent().event == .initial)
        let event = h.publishChange()
        #expect(try c.nextEvent() == event)
    }

    @Test func aThousandSubscribersAllReceiveTheEvent() throws {
        let h = try ServerHarness()
        let clients = try (0..<1000).map { _ in try h.connect() }
        for c in clients { try c.subscribe() }
        for c in clients { #expect(try c.nextEvent().event == .initial) }
        #expect(h.server.subscriberCount == 1000)
        let event = h.publishChange()
        var received = 0
        for c in clients where try c.nextEvent() == event { received += 1 }
        #expect(received == 1000)
    }

    /// The server keeps its subscribers in a list; leaving from its start, middle and end, and
    /// joining after that, leaves every subscriber with each event exactly once. Closed
    /// connections are freed, not kept alive by their own Dispatch sources.
    @Test func subscribersLeavingInAnyOrderLeaveTheOthersReceivingEachEventOnce() throws {
        let h = try ServerHarness()
        var clients = try (0..<10).map { _ in try h.connect() }
        for c in clients { try c.subscribe() }
        for c in clients { #expect(try c.nextEvent().event == .initial) }
        #expect(waitUntilTrue { h.server.subscriberCount == 10 })
        for index in [9, 4, 0] { clients.remove(at: index).close() }
        #expect(waitUntilTrue { h.server.subscriberCount == 7 })
        let late = try h.connect()
        try late.subscribe()
        #expect(try late.nextEvent().event == .initial)
        clients.append(late)
        #expect(h.server.subscriberCount == 8)
        let first = h.publishChange(), second = h.publishChange()
        for c in clients {
            #expect(try c.nextEvent() == first)
            #expect(try c.nextEvent() == second)
        }
        for c in clients { c.close() }
        #expect(waitUntilTrue { h.server.connectionCount == 0 })
        #expect(waitUntilTrue { h.server.connectionObjectCount == 0 })
    }

    /// Events go straight to a socket while nothing is queued for it, and through the queue
    /// once it is full: a subscriber that stops reading for 300 events (its socket fills, the
    /// rest waits in its queue), then reads while 300 more are published, gets every event
    /// once, in order — none goes straight to the socket ahead of what is still queued.
    @Test func aSubscriberThatFallsBehindAndCatchesUpGetsEveryEventOnceInOrder() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.queueLimits = OutgoingQueue.Limits(maxMessages: 10_000, maxBytes: 64 << 20)
        let h = try ServerHarness(configuration: configuration)
        let lagging = try h.connect(), reading = try h.connect()
        for c in [lagging, reading] {
            try c.subscribe()
            #expect(try c.nextEvent().event == .initial)
        }
        var published: [ReachabilityEvent] = []
        func publish() throws {
            published.append(h.publishChange())
            #expect(try reading.nextEvent() == published.last)
        }
        for _ in 0..<300 { try publish() }
        // More than a socket holds: the server queued the rest.
        #expect(waitUntilTrue { h.server.queuedByteCount > 0 })
        // Read on another thread while the main one publishes; handed over by the semaphore.
        final class Received: @unchecked Sendable { var events: [ReachabilityEvent] = []; var error: (any Error)? }
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do {
                for _ in 0..<600 { received.events.append(try lagging.nextEvent()) }
            } catch {
                received.error = error
            }
            done.signal()
        }
        for _ in 0..<300 { try publish() }
        try #require(done.wait(timeout: .now() + 60) == .success)
        #expect(received.error == nil, "\(received.error.map { "\($0)" } ?? "")")
        let events = received.events
        try #require(events.map(\.sequence) == published.map(\.sequence))
        #expect(events == published)
        #expect(waitUntilTrue { h.server.queuedByteCount == 0 })
        let event = h.publishChange()
        #expect(try lagging.nextEvent() == event)
        #expect(try reading.nextEvent() == event)
    }

    @Test func aSubscriberThatNeverReadsIsDroppedWhileOthersKeepReceiving() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.queueLimits = .init(maxMessages: 16, maxBytes: 64 * 1024)
        // Long enough for a loaded machine: the test reads the stuck socket only at the end.
        configuration.dropGrace = .seconds(600)
        let h = try ServerHarness(configuration: configuration, interfaces: 12)
        let stuck = try h.connect()
        try stuck.subscribe()
        let good = try h.connect()
        try good.subscribe()
        _ = try good.nextEvent()

        // The good subscriber reads on its own thread; events come in bursts it can keep up with.
        let total = 600
        let lastSequence = h.sequence + total
        let done = DispatchSemaphore(value: 0)
        let progress = Progress()
        Thread {
            do {
                while true {
                    let event = try good.nextEvent()
                    progress.received(event.sequence)
                    if event.sequence == lastSequence { break }
                }
            } catch { progress.fail(error) }
            done.signal()
        }.start()
        for batch in 0..<(total / 10) {
            for _ in 0..<10 { h.publishChange() }
            let target = h.sequence
            #expect(waitUntilTrue(timeout: 10) { progress.last >= target || progress.error != nil }, "batch \(batch)")
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(progress.error == nil)
        #expect(progress.count == total)
        #expect(h.server.droppedSubscriberCount == 1)

        // The stuck one now reads: events up to the point it fell behind, then the error, then the end.
        var sawError: VarlinkError?
        var lastSeen = 0
        while sawError == nil {
            let reply = try stuck.receive()
            if let name = reply.error { sawError = VarlinkError(name, parameters: reply.parameters); break }
            lastSeen = try reply.decode(ReachabilityEvent.self, key: "event").sequence
        }
        #expect(sawError?.name == "io.reachd.Reachability.SubscriberTooSlow")
        let dropped = sawError?.parameters["dropped"]?.intValue ?? 0
        #expect(dropped > 0)
        #expect(lastSeen < lastSequence)
        #expect(stuck.isClosedByPeer())
    }
}

/// Polls `condition` every 10 ms for up to 5 s.
func waitUntilTrue(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// What a reader thread has seen, read from the test's thread.
final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var _last = 0, _count = 0
    private var _error: Error?
    func received(_ sequence: Int) { lock.withLock { _last = sequence; _count += 1 } }
    func fail(_ error: Error) { lock.withLock { _error = error } }
    var last: Int { lock.withLock { _last } }
    var count: Int { lock.withLock { _count } }
    var error: Error? { lock.withLock { _error } }
}

/// reachd gives the server the monitor's queue and publishes from the monitor's observers, on
/// that queue: delivery then happens before `publish` returns, and nothing may wait for itself.
@Suite struct SharedQueueTests {
    @Test func publishingOnTheSharedQueueDeliversInOrder() throws {
        let monitorQueue = DispatchQueue(label: "test.monitor")
        let h = try ServerHarness(sequence: 700, interfaces: 3, queue: monitorQueue)
        let c = try h.connect()
        try c.subscribe()
        #expect(try c.nextEvent().sequence == 700)
        let resumer = try h.connect()
        #expect(waitUntilTrue { h.server.connectionCount == 2 })
        var published: [ReachabilityEvent] = []
        // As the monitor does: on its queue, several events in one go, and the server's accessors
        // used from there too (they must not wait for the queue they run on).
        let counts = monitorQueue.sync { () -> (Int, Int) in
            for i in 0..<5 { published.append(h.publishChange(gatewayOnly: i % 2 == 1)) }
            return (h.server.connectionCount, h.server.subscriberCount)
        }
        #expect(counts == (2, 1))
        for expected in published { #expect(try c.nextEvent() == expected) }
        // What went out live is what the history replays and GetStatus reports: the bytes reused
        // from one event's `current` as the next one's `previous` were right.
        try resumer.subscribe(after: 700)
        for expected in published { #expect(try resumer.nextEvent() == expected) }
        let status = try h.connect().call(VarlinkCall(method: "io.reachd.Reachability.GetStatus")).decode(Status.self, key: "status")
        #expect(status == h.status)
    }

    @Test func aSubscriberThatNeverReadsDoesNotHoldUpTheSharedQueue() throws {
        var configuration = ReachabilityServer.Configuration()
        configuration.queueLimits = .init(maxMessages: 8, maxBytes: 32 * 1024)
        configuration.dropGrace = .seconds(600)
        let monitorQueue = DispatchQueue(label: "test.monitor")
        let h = try ServerHarness(configuration: configuration, interfaces: 12, queue: monitorQueue)
        let stuck = try h.connect()
        try stuck.subscribe()
        #expect(waitUntilTrue { h.server.subscriberCount == 1 })
        // Far more than the socket buffer and the queue hold: every publish returns regardless.
        let finished = DispatchSemaphore(value: 0)
        monitorQueue.async {
            for _ in 0..<400 { h.publishChange() }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(h.server.droppedSubscriberCount == 1)
        // A newcomer is served by the same queue as usual.
        let c = try h.connect()
        try c.subscribe()
        let initial = try c.nextEvent()
        #expect(initial.sequence == h.sequence && initial.current == h.status)
    }
}
