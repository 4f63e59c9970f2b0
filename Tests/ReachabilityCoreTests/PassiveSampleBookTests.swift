import Testing
@testable import ReachabilityCore

@Suite struct PassiveSampleBookTests {
    static let lan = AddressBits(bytes: [192, 168, 1, 20])
    static let eth0 = 2, wwan0 = 5

    /// A socket from the LAN address to `peer`, with its counters.
    static func socket(_ cookie: UInt64, to peer: [UInt8], rttMs: Double = 50, acked: UInt64 = 0, received: UInt64 = 0,
                       segments: UInt32 = 10, retrans: UInt32 = 0, bound: Int = 0, minRtt: UInt32 = 40_000) -> SockDiagRecord {
        let family: AddressFamily = peer.count == 4 ? .ipv4 : .ipv6
        return SockDiagRecord(family: family, source: family == .ipv4 ? lan : AddressBits(bytes: [0x20, 1, 0xd, 0xb8] + [UInt8](repeating: 0, count: 11) + [2]),
                              sourcePort: 40_000, destination: AddressBits(bytes: peer), destinationPort: 443,
                              boundInterface: bound, cookie: cookie, uid: 1000,
                              info: TCPInfo(rttMicroseconds: UInt32(rttMs * 1000), totalRetransmits: retrans, bytesAcked: acked,
                                            bytesReceived: received, segmentsOut: segments, minRttMicroseconds: minRtt))
    }

    static let prefixes: [Int: [InterfacePrefix]] = [
        eth0: [InterfacePrefix(AddressState(ifindex: eth0, family: .ipv4, address: "192.168.1.20", prefixLength: 24))!],
    ]

    /// Routes 198.51.100.0/24 out of wwan0 and everything else out of eth0; 192.0.2.66 has no route.
    final class Router {
        var asked: [SockDiagRouteQuery] = []
        func route(_ query: SockDiagRouteQuery) -> Int? {
            asked.append(query)
            if query.destination == AddressBits(bytes: [192, 0, 2, 66]) { return nil }
            return query.destination.hasPrefix(AddressBits(bytes: [198, 51, 100, 0]), length: 24) ? PassiveSampleBookTests.wwan0 : PassiveSampleBookTests.eth0
        }
    }

    @Test func onlySocketsThatMovedDataGiveSamples() {
        var book = PassiveSampleBook()
        let router = Router()
        let first = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 1_000), Self.socket(2, to: [198, 51, 100, 7], acked: 500)],
                                uptime: 100, ownPrefixes: Self.prefixes, uplink: router.route)
        #expect(first == QualityDump(uptime: 100, interval: nil, samples: [:]), "the first dump only learns the counters")
        #expect(router.asked.isEmpty)

        let second = book.record([Self.socket(1, to: [192, 0, 2, 1], rttMs: 61.5, received: 11_000, segments: 30, retrans: 2),
                                  Self.socket(2, to: [198, 51, 100, 7], acked: 500)],
                                 uptime: 110, ownPrefixes: Self.prefixes, uplink: router.route)
        #expect(second.interval == 10)
        #expect(second.samples == [Self.eth0: [QualitySample(interfaceIndex: Self.eth0, source: .passive, rttMs: 61.5, minRttMs: 40,
                                                             segmentsSent: 20, segmentsRetransmitted: 2, bytesReceived: 10_000)]])
        #expect(router.asked.map(\.destination) == [AddressBits(bytes: [192, 0, 2, 1])], "idle sockets are not routed")
        #expect(router.asked.first?.uid == 1000 && router.asked.first?.source == Self.lan)

        let third = book.record([Self.socket(1, to: [192, 0, 2, 1], rttMs: 61.5, received: 11_000, segments: 31, retrans: 2),
                                 Self.socket(2, to: [198, 51, 100, 7], acked: 900)],
                                uptime: 120, ownPrefixes: Self.prefixes, uplink: router.route)
        #expect(third.samples.keys.sorted() == [Self.wwan0], "a keepalive (one segment, no data) is not a sample")
        #expect(third.samples[Self.wwan0]?.first?.segmentsSent == 0)
    }

    @Test func aSocketStuckRetransmittingIsASample() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([Self.socket(1, to: [192, 0, 2, 1], acked: 100, segments: 10, retrans: 0)], uptime: 0, ownPrefixes: [:], uplink: router.route)
        let dump = book.record([Self.socket(1, to: [192, 0, 2, 1], acked: 100, segments: 16, retrans: 6)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples[Self.eth0]?.first?.segmentsRetransmitted == 6)
        #expect(dump.samples[Self.eth0]?.first?.segmentsSent == 6)
    }

    @Test func localPeersAndUnroutedSocketsGiveNoSample() {
        var book = PassiveSampleBook()
        let router = Router()
        let peers: [[UInt8]] = [[127, 0, 0, 1], [169, 254, 3, 4], [192, 168, 1, 1], [192, 0, 2, 66],
                                [0, 0, 0, 0], [UInt8](repeating: 0, count: 15) + [1], [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [9]]
        let idle = peers.enumerated().map { Self.socket(UInt64($0.offset), to: $0.element) }
        _ = book.record(idle, uptime: 0, ownPrefixes: Self.prefixes, uplink: router.route)
        let moved = peers.enumerated().map { Self.socket(UInt64($0.offset), to: $0.element, received: 5_000) }
        let dump = book.record(moved, uptime: 10, ownPrefixes: Self.prefixes, uplink: router.route)
        #expect(dump.samples.isEmpty)
        #expect(router.asked.map(\.destination) == [AddressBits(bytes: [192, 168, 1, 1]), AddressBits(bytes: [192, 0, 2, 66])],
                "loopback, link-local and unspecified peers are dropped before the route look-up")
    }

    @Test func aBoundSocketIsItsDevicesAndNeedsNoLookUp() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([], uptime: 0, ownPrefixes: [:], uplink: router.route)
        let dump = book.record([Self.socket(4, to: [192, 0, 2, 1], received: 10, bound: Self.wwan0)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples[Self.wwan0]?.count == 1)
        #expect(router.asked.isEmpty)
    }

    @Test func newSocketsCountFromZeroAndVanishedOnesAreForgotten() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 100)], uptime: 0, ownPrefixes: [:], uplink: router.route)
        #expect(book.trackedSockets == 1)
        let dump = book.record([Self.socket(2, to: [192, 0, 2, 2], received: 700, segments: 9)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples[Self.eth0] == [QualitySample(interfaceIndex: Self.eth0, source: .passive, rttMs: 50, minRttMs: 40,
                                                          segmentsSent: 9, segmentsRetransmitted: 0, bytesReceived: 700)])
        #expect(book.trackedSockets == 1)
        // Socket 1 comes back (the same cookie can only be the same socket): counted from zero,
        // since the book forgot it.
        let again = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 100)], uptime: 20, ownPrefixes: [:], uplink: router.route)
        #expect(again.samples[Self.eth0]?.first?.bytesReceived == 100)
    }

    @Test func socketsWithoutRTTOrTCPInfoGiveNoSample() {
        var book = PassiveSampleBook()
        let router = Router()
        var noInfo = Self.socket(2, to: [192, 0, 2, 2]); noInfo.info = nil
        _ = book.record([Self.socket(1, to: [192, 0, 2, 1]), noInfo], uptime: 0, ownPrefixes: [:], uplink: router.route)
        #expect(book.trackedSockets == 1)
        let dump = book.record([Self.socket(1, to: [192, 0, 2, 1], rttMs: 0, received: 10), noInfo], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples.isEmpty)
    }

    @Test func minRttNotYetMeasuredIsNil() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([], uptime: 0, ownPrefixes: [:], uplink: router.route)
        let dump = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 10, minRtt: UInt32.max)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples[Self.eth0]?.first?.minRttMs == nil)
    }

    @Test func segmentCounterWrapsAround() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([Self.socket(1, to: [192, 0, 2, 1], segments: UInt32.max - 1)], uptime: 0, ownPrefixes: [:], uplink: router.route)
        let dump = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 1, segments: 3)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump.samples[Self.eth0]?.first?.segmentsSent == 5)
    }

    @Test func resetStartsAfresh() {
        var book = PassiveSampleBook()
        let router = Router()
        _ = book.record([Self.socket(1, to: [192, 0, 2, 1])], uptime: 0, ownPrefixes: [:], uplink: router.route)
        book.reset()
        #expect(book.trackedSockets == 0)
        let dump = book.record([Self.socket(1, to: [192, 0, 2, 1], received: 10)], uptime: 10, ownPrefixes: [:], uplink: router.route)
        #expect(dump == QualityDump(uptime: 10, interval: nil, samples: [:]))
    }

    @Test func ipv6PrefixesOfTheUplinkAreLocal() {
        var book = PassiveSampleBook()
        let router = Router()
        let own = [Self.eth0: [InterfacePrefix(AddressState(ifindex: Self.eth0, family: .ipv6, address: "2001:db8::2", prefixLength: 64))!]]
        let near: [UInt8] = [0x20, 1, 0xd, 0xb8] + [UInt8](repeating: 0, count: 11) + [9]
        let far: [UInt8] = [0x20, 1, 0xd, 0xb8, 0, 1] + [UInt8](repeating: 0, count: 9) + [9]
        _ = book.record([], uptime: 0, ownPrefixes: own, uplink: router.route)
        let dump = book.record([Self.socket(1, to: near, received: 10), Self.socket(2, to: far, received: 10)],
                               uptime: 10, ownPrefixes: own, uplink: router.route)
        #expect(dump.samples[Self.eth0]?.count == 1)
    }
}
