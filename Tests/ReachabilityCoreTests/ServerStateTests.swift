import Foundation
import Testing
@testable import ReachabilityCore

@Suite struct EventHistoryTests {
    /// A history at sequence 100 with events 101…(100+n) appended.
    func history(capacity: Int, events n: Int) -> EventHistory<Int> {
        var history = EventHistory<Int>(capacity: capacity, sequence: 100)
        for s in 101..<(101 + n) { history.append(s, sequence: s) }
        return history
    }

    @Test(arguments: [
        // (capacity, events appended, after, expected replay or nil = resync)
        (4, 0, 100, [Int]?.some([])),          // nothing happened since
        (4, 0, 99, nil),                        // from before this history
        (4, 0, 101, nil),                       // from the future (another run)
        (4, 3, 100, [101, 102, 103]),
        (4, 3, 101, [102, 103]),
        (4, 3, 103, []),
        (4, 6, 101, nil),                       // 102 was pushed out (ring keeps 103…106)
        (4, 6, 102, [103, 104, 105, 106]),
        (4, 6, 105, [106]),
        (0, 3, 103, []),                        // no history: only "nothing missed" works
        (0, 3, 102, nil),
    ])
    func resume(capacity: Int, events: Int, after: Int, expected: [Int]?) {
        #expect(history(capacity: capacity, events: events).resumePlan(after: after) == expected)
    }

    @Test func ringKeepsTheNewestInOrder() {
        let h = history(capacity: 3, events: 10)
        #expect(h.elements == [108, 109, 110])
        #expect(h.oldestSequence == 108)
        #expect(h.sequence == 110)
    }

    @Test func aGapInNumberingForgetsTheHistory() {
        var h = history(capacity: 8, events: 3)
        h.append(200, sequence: 200)
        #expect(h.elements == [200])
        #expect(h.resumePlan(after: 103) == nil)
        #expect(h.resumePlan(after: 199) == [200])
    }

    @Test func resetStartsOver() {
        var h = history(capacity: 8, events: 3)
        h.reset(sequence: 5000)
        #expect(h.count == 0)
        #expect(h.resume(after: 5000) == .replay([]))
        #expect(h.resume(after: 103) == .resync)
    }
}

@Suite struct SubscriptionFilterTests {
    static let eth = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up", addresses: ["10.0.0.2/24"], metered: false)

    static func status(_ s: NetworkStatus, _ c: Connectivity = .unknown, primary: Interface? = eth, gateways: [String] = []) -> Status {
        var status = Status.initial(since: Date(timeIntervalSince1970: 0))
        status.status = s; status.reachable = s.isReachable; status.connectivity = c
        status.primary = s.isReachable ? primary : nil; status.gateways = gateways
        return status
    }

    static func event(_ seq: Int, _ current: Status, kind: ReachabilityEvent.Kind = .reachabilityChanged) -> ReachabilityEvent {
        ReachabilityEvent(sequence: seq, timestamp: Date(), event: kind, reason: Reason(code: .routeAdded), previous: nil, current: current)
    }

    @Test func allEventsWithoutStatusOnly() {
        var filter = SubscriptionFilter(statusOnly: false)
        let s = Self.status(.ethernet)
        #expect(filter.admit(Self.event(1, s, kind: .initial)) == true)
        #expect(filter.admit(Self.event(2, s)) == true)
        #expect(filter.admit(Self.event(3, Self.status(.ethernet, gateways: ["10.0.0.1"]))) == true)
    }

    @Test func statusOnlyTable() {
        var filter = SubscriptionFilter(statusOnly: true)
        let steps: [(Status, ReachabilityEvent.Kind, Bool)] = [
            (Self.status(.notReachable, .none), .initial, true),
            (Self.status(.ethernet), .reachabilityChanged, true),                          // status
            (Self.status(.ethernet, gateways: ["10.0.0.1"]), .reachabilityChanged, false),  // gateway only
            (Self.status(.ethernet, .full, gateways: ["10.0.0.1"]), .reachabilityChanged, true), // connectivity
            (Self.status(.ethernet, .full, primary: Interface(name: "eth1", index: 3, kind: .ethernet, up: true, carrier: true, operstate: "up", addresses: [], metered: false)), .reachabilityChanged, true), // primary
            (Self.status(.ethernet, .full, primary: Interface(name: "eth1", index: 3, kind: .ethernet, up: true, carrier: true, operstate: "up", addresses: [], metered: false)), .initial, true), // initial always
        ]
        for (i, (status, kind, expected)) in steps.enumerated() {
            #expect(filter.admit(Self.event(i, status, kind: kind)) == expected, "step \(i)")
        }
    }

    @Test func statusOnlyComparesWithWhatWasSentNotWithPrevious() {
        var filter = SubscriptionFilter(statusOnly: true, lastSent: Self.status(.ethernet, .limited))
        // Connectivity goes limited → full while this subscriber filtered nothing: sent.
        #expect(filter.admit(Self.event(1, Self.status(.ethernet, .full))) == true)
        #expect(filter.admit(Self.event(2, Self.status(.ethernet, .full, gateways: ["x"]))) == false)
    }

    @Test func changesTable() {
        var filter = SubscriptionFilter(statusOnly: false, changes: [.gateways, .connectivity])
        let steps: [(Status, ReachabilityEvent.Kind, Bool)] = [
            (Self.status(.notReachable, .none), .initial, true),
            (Self.status(.ethernet, .none), .reachabilityChanged, false),                   // status only
            (Self.status(.ethernet, .none, gateways: ["10.0.0.1"]), .reachabilityChanged, true),  // gateways
            (Self.status(.ethernet, .full, gateways: ["10.0.0.1"]), .reachabilityChanged, true),  // connectivity
            (Self.status(.wifi, .full, gateways: ["10.0.0.1"]), .reachabilityChanged, false),     // status
        ]
        for (i, (status, kind, expected)) in steps.enumerated() {
            #expect(filter.admit(Self.event(i, status, kind: kind)) == expected, "step \(i)")
        }
    }

    @Test func statusOnlyAndChangesAddUp() {
        let filter = SubscriptionFilter(statusOnly: true, changes: [.expensive])
        #expect(filter.fields == [.status, .connectivity, .primary, .expensive])
        #expect(SubscriptionFilter(statusOnly: true).fields == Status.essentialFields)
        #expect(SubscriptionFilter(statusOnly: false).fields == nil)
    }
}

@Suite struct OutgoingQueueTests {
    func data(_ n: Int) -> Data { Data(repeating: 0x61, count: n) }

    @Test func boundedByMessages() {
        var q = OutgoingQueue(limits: .init(maxMessages: 3, maxBytes: 1000))
        for _ in 0..<3 { #expect(q.enqueue(data(10)) == .queued) }
        #expect(q.enqueue(data(10)) == .overflow(dropped: 4))
        #expect(q.isEmpty && q.byteCount == 0)
    }

    @Test func boundedByBytes() {
        var q = OutgoingQueue(limits: .init(maxMessages: 100, maxBytes: 25))
        #expect(q.enqueue(data(10)) == .queued)
        #expect(q.enqueue(data(10)) == .queued)
        #expect(q.enqueue(data(10)) == .overflow(dropped: 3))
    }

    @Test func aStartedMessageIsFinishedNotDropped() {
        var q = OutgoingQueue(limits: .init(maxMessages: 2, maxBytes: 1000))
        #expect(q.enqueue(Data("hello".utf8)) == .queued)
        #expect(q.enqueue(Data("world".utf8)) == .queued)
        q.consume(2)
        #expect(q.enqueue(data(1)) == .overflow(dropped: 2))  // "world" and the new one
        #expect(q.head == Data("llo".utf8))
        #expect(q.byteCount == 3)
        #expect(q.enqueue(Data("E".utf8), force: true) == .queued)
        q.consume(3)
        #expect(q.head == Data("E".utf8))
        q.consume(1)
        #expect(q.isEmpty && q.byteCount == 0 && q.head == nil)
    }

    @Test func partialWritesAdvanceInOrder() {
        var q = OutgoingQueue()
        _ = q.enqueue(Data("abc".utf8)); _ = q.enqueue(Data("de".utf8))
        var out = Data()
        while let head = q.head { let n = min(2, head.count); out.append(head.prefix(n)); q.consume(n) }
        #expect(out == Data("abcde".utf8))
    }
}
