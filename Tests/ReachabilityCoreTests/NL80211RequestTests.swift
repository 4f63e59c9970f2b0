import Testing
@testable import ReachabilityCore

/// The requests reachd sends nl80211, against the kernel's layout written out by hand, and the
/// control family's answer that names nl80211's id.
@Suite struct NL80211RequestTests {
    typealias Bytes = NL80211Bytes

    @Test func getFamilyAsksTheControlFamilyForNl80211() {
        let request = NL80211Request.getFamily(sequence: 7)
        // nlmsghdr: length 32, GENL_ID_CTRL, NLM_F_REQUEST, seq 7, pid 0; genlmsghdr: GETFAMILY,
        // version 1; CTRL_ATTR_FAMILY_NAME "nl80211\0" (12 bytes, 4 of header).
        var expected: [UInt8] = Bytes.u32(32) + Bytes.u16(0x10)
        expected += Bytes.u16(0x1) + Bytes.u32(7) + Bytes.u32(0)
        expected += [3, 1, 0, 0] + Bytes.u16(12) + Bytes.u16(2)
        expected += Array("nl80211".utf8) + [0]
        #expect(request == expected)
    }

    @Test func dumpsCarryTheFamilyTheDumpFlagAndTheInterface() {
        let interfaces = NL80211Request.getInterfaces(family: 0x1C, sequence: 8)
        var expected: [UInt8] = Bytes.u32(20) + Bytes.u16(0x1C)
        expected += Bytes.u16(0x301) + Bytes.u32(8) + Bytes.u32(0)
        expected += [5, 0, 0, 0]
        #expect(interfaces == expected)
        let stations = NL80211Request.getStations(family: 0x1C, ifindex: 3, sequence: 9)
        expected = Bytes.u32(28) + Bytes.u16(0x1C)
        expected += Bytes.u16(0x301) + Bytes.u32(9) + Bytes.u32(0)
        expected += [17, 0, 0, 0] + Bytes.u16(8) + Bytes.u16(3)
        expected += Bytes.u32(3)
        #expect(stations == expected)
    }

    @Test func theFamilyIDIsReadFromTheControlFamilysAnswer() throws {
        let answer = Bytes.message(type: 0x10, flags: 0, sequence: 7, command: 1, [
            Bytes.attribute(2, Array("nl80211".utf8) + [0]),
            Bytes.attribute(1, Bytes.u16(0x1C)),
            Bytes.attribute(3, Bytes.u32(1)),
        ])
        #expect(try NL80211Request.familyID(answer, sequence: 7) == 0x1C)
        // Another request's answer, or another family's message, names nothing.
        #expect(try NL80211Request.familyID(answer, sequence: 8) == nil)
        // No nl80211 in the kernel (no cfg80211): ENOENT, as the kernel answers.
        #expect(throws: NL80211ReplyError.kernel(errno: 2)) {
            try NL80211Request.familyID(Bytes.control(type: 2, sequence: 7, code: -2), sequence: 7)
        }
        // A length past the datagram is refused, not read.
        #expect(throws: (any Error).self) { try NL80211Request.familyID(Array(answer.dropLast(8)), sequence: 7) }
    }
}
