import Testing
@testable import ReachabilityCore
import TestSupport

/// The bound on a dump: at most `limit` sockets read, shared fairly between owners, the same
/// ones from dump to dump.
@Suite struct SockDiagSelectionTests {
    /// Offers `sockets` (owner, cookie) as one dump; returns the cookies read.
    static func dump(_ selection: inout SockDiagSelection, _ sockets: [(uid: UInt32, cookie: UInt64)]) -> [UInt64] {
        let read = sockets.filter { selection.admits(uid: $0.uid, cookie: $0.cookie) }.map(\.cookie)
        return read
    }

    /// `count` sockets of `uid`, cookies from `first`.
    static func sockets(of uid: UInt32, _ count: Int, from first: UInt64) -> [(uid: UInt32, cookie: UInt64)] {
        (0..<count).map { (uid, first + UInt64($0)) }
    }

    @Test func belowTheBudgetEverySocketIsRead() {
        var selection = SockDiagSelection(limit: 100)
        let all = Self.sockets(of: 1000, 70, from: 1) + Self.sockets(of: 0, 5, from: 500)
        #expect(Self.dump(&selection, all).count == 75)
        selection.finish()
        #expect(selection.shifts.isEmpty)
        #expect(Self.dump(&selection, all).count == 75)
    }

    /// One user's 60,000 sockets: thinned to the budget from the second dump on, the app's few
    /// read whole, the same ones each time.
    @Test func aCrowdOfOneUserIsThinnedAndTheAppIsReadWhole() {
        var selection = SockDiagSelection()
        let app = Self.sockets(of: 1000, 12, from: 1)
        let crowd = Self.sockets(of: 65534, 60_000, from: 1_000)
        // Listed in an order that interleaves them, as a hash table would.
        let all = (crowd + app).sorted { SockDiagSelection.mixed($0.cookie ^ 0x55) < SockDiagSelection.mixed($1.cookie ^ 0x55) }
        let first = Self.dump(&selection, all)
        #expect(first.count == SockDiagSelection.defaultLimit && selection.truncated, "a crowd never seen is cut at the limit")
        selection.finish()
        #expect(selection.shifts[65534] == 3 && selection.shifts[1000] == nil, "\(selection.shifts)")
        let second = Self.dump(&selection, all)
        #expect(!selection.truncated)
        #expect(Set(app.map(\.cookie)).isSubset(of: Set(second)))
        let crowdRead = second.count - app.count
        #expect(crowdRead > 60_000 / 8 - 400 && crowdRead < 60_000 / 8 + 400, "about 1 in 8: \(crowdRead)")
        selection.finish()
        #expect(Self.dump(&selection, all) == second, "the same sockets each dump")
    }

    /// Random owners and counts: never more than the limit read, and from the second dump on
    /// every owner within the fair share read whole.
    @Test(arguments: 0..<40)
    func neverMoreThanTheLimitAndFairShares(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 0x5E1EC7)
        let limit = [64, 1000, 16_384][seed % 3]
        var selection = SockDiagSelection(limit: limit)
        var all: [(uid: UInt32, cookie: UInt64)] = []
        var counts: [UInt32: Int] = [:]
        var cookie: UInt64 = 1
        for uid in 0..<UInt32.random(in: 1...12, using: &rng) {
            let count = Int.random(in: 0...1, using: &rng) == 0 ? Int.random(in: 1...20, using: &rng) : Int.random(in: 1...(limit * 3), using: &rng)
            counts[uid] = count
            all += Self.sockets(of: uid, count, from: cookie)
            cookie += UInt64(count) + UInt64.random(in: 0...1000, using: &rng)
        }
        all.shuffle(using: &rng)
        for dump in 0..<3 {
            let read = Self.dump(&selection, all)
            #expect(read.count <= limit, "seed \(seed), dump \(dump)")
            #expect(selection.seen == all.count)
            if dump > 0 {
                let shifts = SockDiagSelection.shifts(for: counts, budget: selection.budget)
                let readSet = Set(read)
                for (uid, count) in counts where shifts[uid] == nil {
                    let mine = all.filter { $0.uid == uid }.map(\.cookie)
                    #expect(mine.allSatisfy(readSet.contains), "seed \(seed): uid \(uid) with \(count) sockets, within its share, read whole")
                }
                let expected = counts.reduce(0.0) { $0 + Double($1.value) / Double(1 << Int(shifts[$1.key] ?? 0)) }
                #expect(expected <= Double(selection.budget) + 0.5, "seed \(seed): the thinning aims at the budget: \(expected)")
            }
            selection.finish()
        }
    }

    /// A larger k reads a subset of what a smaller one read.
    @Test func thinningMoreReadsASubset() {
        for cookie in UInt64(0)..<5000 {
            for shift in UInt8(1)..<8 where SockDiagSelection.chosen(cookie: cookie, shift: shift) {
                #expect(SockDiagSelection.chosen(cookie: cookie, shift: shift - 1))
            }
        }
    }

    /// Through the book: sockets that the previous dump passed over are learned when they are
    /// first read, not counted from zero (their counters are the connection's life); a socket
    /// new since is counted.
    @Test func socketsPassedOverBeforeAreLearnedNotCountedAsNew() {
        var selection = SockDiagSelection(limit: 40)
        var book = PassiveSampleBook()
        let route = { (_: SockDiagRouteQuery) -> Int? in 2 }
        func record(_ cookie: UInt64, uid: UInt32, received: UInt64) -> SockDiagRecord {
            SockDiagRecord(family: .ipv4, source: AddressBits(bytes: [10, 0, 0, 2]), sourcePort: 1, destination: AddressBits(bytes: [192, 0, 2, 1]),
                           destinationPort: 443, cookie: cookie, uid: uid,
                           info: TCPInfo(rttMicroseconds: 50_000, totalRetransmits: 0, bytesAcked: 0, bytesReceived: received, segmentsOut: 10))
        }
        func pass(_ records: [SockDiagRecord], at uptime: Double) -> QualityDump {
            let read = records.filter { selection.admits(uid: $0.uid, cookie: $0.cookie) }
            let dump = book.record(read, uptime: uptime, ownPrefixes: [:], uplink: route,
                                   readBefore: { [selection] in selection.readBefore(uid: $0, cookie: $1) })
            selection.finish()
            return dump
        }
        // 200 idle sockets of one owner: thinned from the second dump on.
        let crowd = (0..<200).map { record(UInt64($0), uid: 7, received: 1_000_000) }
        _ = pass(crowd, at: 0)
        #expect(pass(crowd, at: 10).samples.isEmpty)
        #expect(!selection.shifts.isEmpty)
        // The crowd shrinks to 20: read as thinned for 200 once more, then whole. The ones
        // passed over until then are learned when first read; another owner's new socket is
        // counted from zero.
        let few = Array(crowd.prefix(20))
        #expect(pass(few, at: 20).samples.isEmpty)
        #expect(selection.shifts.isEmpty)
        let fresh = pass(few + [record(9_999, uid: 8, received: 700)], at: 30)
        #expect(fresh.samples[2]?.first?.bytesReceived == 700, "a life's counters are not a sample: \(fresh.samples)")
        #expect(book.trackedSockets == 21)
    }

    @Test func anAbandonedDumpKeepsTheRules() {
        var selection = SockDiagSelection(limit: 40)
        let crowd = Self.sockets(of: 7, 200, from: 0)
        _ = Self.dump(&selection, crowd)
        selection.finish()
        let shifts = selection.shifts
        _ = Self.dump(&selection, Array(crowd.prefix(3)))
        selection.abandon()
        #expect(selection.shifts == shifts && selection.seen == 0)
        selection.forget()
        #expect(selection.shifts.isEmpty && !selection.readBefore(uid: 7, cookie: 1))
    }
}
