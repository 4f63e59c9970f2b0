import Testing
@testable import ReachabilityCore

/// Builds sock_diag reply bytes as the kernel lays them out (native byte order for the netlink
/// header, `tcp_info` and the cookie; network order for ports and addresses).
enum SockDiagBytes {
    static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func le64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }

    static func message(type: UInt16, sequence: UInt32 = 7, payload: [UInt8]) -> [UInt8] {
        pad(le32(UInt32(16 + payload.count)) + le16(type) + le16(0x2) + le32(sequence) + le32(0) + payload)
    }

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        pad(le16(UInt16(4 + value.count)) + le16(type) + value)
    }

    /// A `tcp_info` of `length` bytes with the fields the reader knows set.
    static func tcpInfo(length: Int = 280, rtt: UInt32 = 48_000, minRtt: UInt32 = 40_000, retrans: UInt32 = 3,
                        acked: UInt64 = 5_000, received: UInt64 = 90_000, segsOut: UInt32 = 120, segsIn: UInt32 = 95,
                        timeouts: UInt8 = 2, lastAckReceived: UInt32 = 1_500) -> [UInt8] {
        var info = [UInt8](repeating: 0, count: max(length, 160))
        func put(_ bytes: [UInt8], at offset: Int) { info.replaceSubrange(offset..<(offset + bytes.count), with: bytes) }
        put([timeouts], at: 2); put(le32(lastAckReceived), at: 56)
        put(le32(rtt), at: 68); put(le32(retrans), at: 100); put(le64(acked), at: 120)
        put(le64(received), at: 128); put(le32(segsOut), at: 136); put(le32(segsIn), at: 140); put(le32(minRtt), at: 148)
        return Array(info.prefix(length))
    }

    static func inetDiagMessage(family: UInt8 = 2, source: [UInt8], sourcePort: UInt16, destination: [UInt8], destinationPort: UInt16,
                                interface: UInt32 = 0, cookie: UInt64, uid: UInt32 = 1000, attributes: [[UInt8]]) -> [UInt8] {
        var message: [UInt8] = [family, 1, 0, 0]
        message += [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xff), UInt8(destinationPort >> 8), UInt8(destinationPort & 0xff)]
        message += source + [UInt8](repeating: 0, count: 16 - source.count)
        message += destination + [UInt8](repeating: 0, count: 16 - destination.count)
        message += le32(interface) + le32(UInt32(truncatingIfNeeded: cookie)) + le32(UInt32(truncatingIfNeeded: cookie >> 32))
        message += le32(0) + le32(0) + le32(0) + le32(uid) + le32(4242)
        return message + attributes.flatMap { $0 }
    }

    static let done = message(type: 3, payload: le32(0))
}

@Suite struct SockDiagReplyTests {
    typealias B = SockDiagBytes

    @Test func readsASocketAndItsTCPInfo() throws {
        let datagram = B.message(type: 20, payload: B.inetDiagMessage(
            source: [10, 0, 0, 2], sourcePort: 40_000, destination: [192, 0, 2, 9], destinationPort: 443,
            interface: 0, cookie: 0x1_0000_0002, attributes: [B.attribute(8, [0]), B.attribute(15, B.le32(77)),
                                                              B.attribute(2, B.tcpInfo())])) + B.done
        var records: [SockDiagRecord] = []
        let progress = try SockDiagReply.parse(datagram, sequence: 7, into: &records)
        #expect(progress == .init(done: true, skipped: 0))
        #expect(records == [SockDiagRecord(
            family: .ipv4, state: 1, source: AddressBits(bytes: [10, 0, 0, 2]), sourcePort: 40_000,
            destination: AddressBits(bytes: [192, 0, 2, 9]), destinationPort: 443, boundInterface: 0, cookie: 0x1_0000_0002,
            uid: 1000, mark: 77,
            info: TCPInfo(rttMicroseconds: 48_000, receiverRttMicroseconds: 0, totalRetransmits: 3, bytesAcked: 5_000,
                          bytesReceived: 90_000, segmentsOut: 120, minRttMicroseconds: 40_000, segmentsIn: 95,
                          consecutiveTimeouts: 2, lastAckReceivedMs: 1_500))])
    }

    @Test func ipv6AndMappedIPv4() throws {
        let v6: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]
        let mapped: ([UInt8]) -> [UInt8] = { [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + $0 }
        let datagram = B.message(type: 20, payload: B.inetDiagMessage(family: 10, source: v6, sourcePort: 1, destination: v6,
                                                                      destinationPort: 2, cookie: 1, attributes: []))
            + B.message(type: 20, payload: B.inetDiagMessage(family: 10, source: mapped([10, 0, 0, 2]), sourcePort: 1,
                                                             destination: mapped([198, 51, 100, 1]), destinationPort: 2, cookie: 2, attributes: []))
        var records: [SockDiagRecord] = []
        let progress = try SockDiagReply.parse(datagram, sequence: nil, into: &records)
        #expect(!progress.done)
        #expect(records.map(\.family) == [.ipv6, .ipv4])
        #expect(records[0].destination == AddressBits(bytes: v6))
        #expect(records[1].destination == AddressBits(bytes: [198, 51, 100, 1]))
        #expect(records[1].source == AddressBits(bytes: [10, 0, 0, 2]))
        #expect(records[0].info == nil)
    }

    /// An older kernel's shorter tcp_info gives what fits, nothing past its end.
    @Test(arguments: [(104, false, false, false), (136, true, false, false), (140, true, true, false), (152, true, true, true)])
    func shortTCPInfoGivesTheFieldsThatFit(length: Int, bytes: Bool, segments: Bool, minRtt: Bool) throws {
        let datagram = B.message(type: 20, payload: B.inetDiagMessage(
            source: [10, 0, 0, 2], sourcePort: 1, destination: [192, 0, 2, 9], destinationPort: 2, cookie: 9,
            attributes: [B.attribute(2, B.tcpInfo(length: length))]))
        var records: [SockDiagRecord] = []
        _ = try SockDiagReply.parse(datagram, sequence: nil, into: &records)
        let info = try #require(records.first?.info)
        #expect(info.rttMicroseconds == 48_000)
        #expect(info.totalRetransmits == 3)
        #expect((info.bytesReceived != nil) == bytes)
        #expect((info.segmentsOut != nil) == segments)
        #expect((info.minRttMicroseconds != nil) == minRtt)
    }

    @Test func kernelErrorsAreThrown() {
        var records: [SockDiagRecord] = []
        #expect(throws: SockDiagError.kernel(errno: 1)) {
            try SockDiagReply.parse(B.message(type: 2, payload: B.le32(UInt32(bitPattern: -1)) + [UInt8](repeating: 0, count: 16)),
                                    sequence: 7, into: &records)
        }
        #expect(throws: SockDiagError.kernel(errno: 2)) {
            try SockDiagReply.parse(B.message(type: 3, payload: B.le32(UInt32(bitPattern: -2))), sequence: 7, into: &records)
        }
        #expect(throws: SockDiagError.overrun) {
            try SockDiagReply.parse(B.message(type: 4, payload: []), sequence: 7, into: &records)
        }
    }

    @Test func errorsSayWhatFailedInSockDiagsWords() {
        #expect(SockDiagError.kernel(errno: 1).description == "sock_diag: the kernel refused the dump (errno 1)")
        #expect(SockDiagError.malformed(offset: 16, problem: "x").description == "sock_diag: malformed reply at byte 16: x")
        #expect(SockDiagError.overrun.description == "sock_diag: the kernel dropped part of the dump (overrun)")
    }

    @Test func anotherRequestsMessagesArePassedOver() throws {
        let stale = B.message(type: 20, sequence: 6, payload: B.inetDiagMessage(
            source: [10, 0, 0, 2], sourcePort: 1, destination: [192, 0, 2, 9], destinationPort: 2, cookie: 1, attributes: []))
        var records: [SockDiagRecord] = []
        let progress = try SockDiagReply.parse(stale + B.message(type: 3, sequence: 6, payload: B.le32(0)) + B.done,
                                               sequence: 7, into: &records)
        #expect(records.isEmpty)
        #expect(progress.done)
    }

    @Test func brokenRecordsAreSkippedAndBrokenFramingThrows() throws {
        let good = B.message(type: 20, payload: B.inetDiagMessage(
            source: [10, 0, 0, 2], sourcePort: 1, destination: [192, 0, 2, 9], destinationPort: 2, cookie: 1, attributes: []))
        let short = B.message(type: 20, payload: [2, 1, 0, 0])
        let badAttribute = B.message(type: 20, payload: B.inetDiagMessage(
            source: [10, 0, 0, 2], sourcePort: 1, destination: [192, 0, 2, 9], destinationPort: 2, cookie: 2,
            attributes: [B.le16(400) + B.le16(2)]))
        let otherFamily = B.message(type: 20, payload: B.inetDiagMessage(family: 1, source: [], sourcePort: 1, destination: [],
                                                                         destinationPort: 2, cookie: 3, attributes: []))
        var records: [SockDiagRecord] = []
        let progress = try SockDiagReply.parse(good + short + badAttribute + otherFamily + good + B.done, sequence: 7, into: &records)
        #expect(progress == .init(done: true, skipped: 3))
        #expect(records.count == 2)

        let overlong = B.le32(4096) + Array(good.dropFirst(4))
        #expect(throws: SockDiagError.self) { try SockDiagReply.parse(overlong, sequence: 7, into: &records) }
        #expect(throws: SockDiagError.self) { try SockDiagReply.parse(B.le32(8) + Array(good.dropFirst(4)), sequence: 7, into: &records) }
        #expect(throws: SockDiagError.self) { try SockDiagReply.parse(good + [1, 2, 3, 4], sequence: 7, into: &records) }
    }

    /// With a selection: the owner and cookie of each socket are offered; those it passes over
    /// are not read at all (a broken one among them is not even counted as skipped), and the
    /// limit stops the reading.
    @Test func aSelectionReadsOnlyTheSocketsItAdmits() throws {
        func socket(_ cookie: UInt64, uid: UInt32, broken: Bool = false) -> [UInt8] {
            B.message(type: 20, payload: B.inetDiagMessage(
                source: [10, 0, 0, 2], sourcePort: 1, destination: [192, 0, 2, 9], destinationPort: 2, cookie: cookie, uid: uid,
                attributes: broken ? [B.le16(400) + B.le16(2)] : [B.attribute(2, B.tcpInfo())]))
        }
        var selection = SockDiagSelection(limit: 3)
        var records: [SockDiagRecord] = []
        let first = (0..<5).flatMap { socket(UInt64($0), uid: 1000 + UInt32($0 % 2)) }
        let progress = try SockDiagReply.parse(first, selection: &selection, into: &records)
        #expect(progress == .init(done: false, skipped: 0))
        #expect(records.map(\.cookie) == [0, 1, 2] && records.map(\.uid) == [1000, 1001, 1000])
        #expect(selection.seen == 5 && selection.admitted == 3 && selection.truncated)

        let brokenLast = socket(8, uid: 5) + socket(7, uid: 5, broken: true) + B.done
        for (limit, skipped) in [(1, 0), (100, 1)] {
            selection = SockDiagSelection(limit: limit)
            records = []
            let second = try SockDiagReply.parse(brokenLast, selection: &selection, into: &records)
            #expect(second == .init(done: true, skipped: skipped), "limit \(limit)")
            #expect(records.map(\.cookie) == [8])
        }
    }

    /// Every prefix of a real dump is read without a crash: whole messages give records, a cut
    /// one is an error.
    @Test func everyTruncationOfARealDumpIsSafe() throws {
        let input = try #require(try FuzzInputs.inputs("sockdiag").first { $0.name == "ok-ipv4-loopback" })
        for length in 0...input.bytes.count {
            var records: [SockDiagRecord] = []
            _ = try? SockDiagReply.parse(Array(input.bytes.prefix(length)), sequence: nil, into: &records)
            #expect(records.count <= 3)
        }
    }
}

extension FuzzRegressionTests {
    @Test func sockDiag() throws {
        let inputs = try FuzzInputs.inputs("sockdiag")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let read = FuzzTargets.sockDiag(input.bytes)
            if input.name.hasPrefix("ok-") { #expect((read ?? 0) >= 3, "\(input.name)") }
        }
    }
}
