import Testing
import TestSupport
@testable import ReachabilityCore

/// Builds nl80211 replies byte by byte as the kernel lays them out: `struct nlmsghdr` (16
/// bytes), `struct genlmsghdr` (cmd, version, 2 reserved), then `struct nlattr`s (u16 length
/// with the header, u16 type), each padded to 4; native byte order throughout. The numbers are
/// the kernel's (`include/uapi/linux/nl80211.h`), written out here rather than taken from the
/// parser, so that a wrong constant there fails.
enum NL80211Bytes {
    static let family: UInt16 = 0x1C            // what CTRL_CMD_GETFAMILY might resolve "nl80211" to
    static let newInterface: UInt8 = 7          // NL80211_CMD_NEW_INTERFACE
    static let newStation: UInt8 = 19           // NL80211_CMD_NEW_STATION
    static let ifindex: UInt16 = 3              // NL80211_ATTR_IFINDEX
    static let iftype: UInt16 = 5               // NL80211_ATTR_IFTYPE
    static let mac: UInt16 = 6                  // NL80211_ATTR_MAC
    static let staInfo: UInt16 = 21             // NL80211_ATTR_STA_INFO
    static let wiphyFreq: UInt16 = 38           // NL80211_ATTR_WIPHY_FREQ
    static let ssid: UInt16 = 52                // NL80211_ATTR_SSID
    static let signal: UInt16 = 7               // NL80211_STA_INFO_SIGNAL
    static let txBitrate: UInt16 = 8            // NL80211_STA_INFO_TX_BITRATE
    static let signalAvg: UInt16 = 13           // NL80211_STA_INFO_SIGNAL_AVG
    static let rxBitrate: UInt16 = 14           // NL80211_STA_INFO_RX_BITRATE
    static let staFlags: UInt16 = 17            // NL80211_STA_INFO_STA_FLAGS
    static let beaconSignalAvg: UInt16 = 30     // NL80211_STA_INFO_BEACON_SIGNAL_AVG
    static let rateBitrate: UInt16 = 1          // NL80211_RATE_INFO_BITRATE (u16)
    static let rateBitrate32: UInt16 = 5        // NL80211_RATE_INFO_BITRATE32 (u32)
    static let nested: UInt16 = 0x8000          // NLA_F_NESTED
    static let associated: UInt32 = 1 << 7      // BIT(NL80211_STA_FLAG_ASSOCIATED)

    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    static func s8(_ value: Int8) -> [UInt8] { [UInt8(bitPattern: value)] }
    static func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        pad(u16(UInt16(4 + value.count)) + u16(type) + value)
    }

    static func nest(_ type: UInt16, _ attributes: [[UInt8]]) -> [UInt8] {
        attribute(type | nested, Array(attributes.joined()))
    }

    static func message(type: UInt16 = family, flags: UInt16 = 0x2, sequence: UInt32 = 9, command: UInt8,
                        _ attributes: [[UInt8]]) -> [UInt8] {
        let payload: [UInt8] = [command, 1, 0, 0] + Array(attributes.joined())
        var header: [UInt8] = u32(UInt32(16 + payload.count)) + u16(type)
        header += u16(flags) + u32(sequence) + u32(0)
        return pad(header + payload)
    }

    static func control(type: UInt16, sequence: UInt32 = 9, code: Int32) -> [UInt8] {
        var bytes: [UInt8] = u32(20) + u16(type) + u16(0x2)
        bytes += u32(sequence) + u32(0) + u32(UInt32(bitPattern: code))
        return bytes
    }

    static func done(sequence: UInt32 = 9, code: Int32 = 0) -> [UInt8] { control(type: 3, sequence: sequence, code: code) }

    static let apMAC: [UInt8] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]

    /// The access point's record of a station dump on ifindex 3.
    static func station(signal: Int8 = -56, average: Int8 = -58, bitrate32: UInt32? = 8_667, bitrate16: UInt16? = 8_667,
                        rx16: UInt16 = 6_500, flags: (mask: UInt32, set: UInt32)? = (associated, associated),
                        mac: [UInt8] = apMAC, sequence: UInt32 = 9, messageFlags: UInt16 = 0x2) -> [UInt8] {
        var tx: [[UInt8]] = []
        if let bitrate32 { tx.append(attribute(rateBitrate32, u32(bitrate32))) }
        if let bitrate16 { tx.append(attribute(rateBitrate, u16(bitrate16))) }
        var info = [attribute(Self.signal, s8(signal)), attribute(signalAvg, s8(average)),
                    nest(txBitrate, tx), nest(rxBitrate, [attribute(rateBitrate, u16(rx16))])]
        if let flags { info.append(attribute(staFlags, u32(flags.mask) + u32(flags.set))) }
        return message(flags: messageFlags, sequence: sequence, command: newStation,
                       [attribute(ifindex, u32(3)), attribute(Self.mac, mac), nest(staInfo, info)])
    }

    /// The interface record of ifindex 3: a station on `ssid` at `frequency`.
    static func interface(ssid: [UInt8] = Array("Home".utf8), frequency: UInt32 = 5_180) -> [UInt8] {
        message(command: newInterface, [attribute(ifindex, u32(3)), attribute(iftype, u32(2)),
                                        attribute(Self.ssid, ssid), attribute(wiphyFreq, u32(frequency))])
    }
}

@Suite struct NL80211ReplyTests {
    typealias B = NL80211Bytes

    private func parse(_ bytes: [UInt8], family: UInt16? = B.family, sequence: UInt32? = 9) throws -> (NL80211Reply.Records, NL80211Reply.Progress) {
        var records = NL80211Reply.Records()
        let progress = try NL80211Reply.parse(bytes, family: family, sequence: sequence, into: &records)
        return (records, progress)
    }

    @Test func aStationDumpGivesTheAccessPointsFigures() throws {
        let (records, progress) = try parse(B.station() + B.done())
        #expect(progress == .init(done: true, skipped: 0, interrupted: false))
        #expect(records.interfaces.isEmpty)
        let station = try #require(records.stations.first)
        #expect(records.stations.count == 1)
        #expect(station == NL80211StationInfo(ifindex: 3, mac: B.apMAC, signalDbm: -56, signalAverageDbm: -58,
                                              txBitrateKbps: 866_700, rxBitrateKbps: 650_000, associated: true))

        let wifi = WiFiStation(nl80211: station)
        #expect(wifi.owner == .nl80211)
        #expect(wifi.bssid?.description == "02:11:22:33:44:55")
        #expect(wifi.signalDbm == -56)
        #expect(wifi.strengthPercent == 63)
        #expect(wifi.bars == 3)
        #expect(wifi.txBitrateKbps == 866_700)
        #expect(wifi.ssid == nil && wifi.frequencyMHz == nil && wifi.band == nil)
    }

    @Test func theInterfaceRecordGivesNameAndChannel() throws {
        let ssid: [UInt8] = Array("café".utf8) + [0x1B, 0xFF]
        let (records, progress) = try parse(B.interface(ssid: ssid, frequency: 5_955) + B.station() + B.done())
        #expect(progress.done && progress.skipped == 0)
        let interface = try #require(records.interfaces.first)
        #expect(interface == NL80211InterfaceInfo(ifindex: 3, interfaceType: 2, ssid: ssid, frequencyMHz: 5_955))
        let wifi = WiFiStation(nl80211: try #require(records.stations.first), interface: interface)
        #expect(wifi.ssid?.bytes == ssid)
        #expect(wifi.ssid?.display == "café\\x1b\\xff")
        #expect(wifi.band == .band6GHz)
        #expect(wifi.frequencyMHz == 5_955)
    }

    static let transmitRateCases: [(UInt32?, UInt16?, Int?)] = [
        // (u32, u16, expected kbit/s): the u32 wins; the u16 alone; 0 is unknown.
        (46_116, nil, 4_611_600),
        (nil, 1_300, 130_000),
        (8_667, 1, 866_700),
        (0, nil, nil),
        (nil, 0, nil),
        (nil, nil, nil),
        (UInt32.max, nil, Int(UInt32.max) * 100),
    ]

    @Test(arguments: transmitRateCases)
    func transmitRate(u32: UInt32?, u16: UInt16?, kbps: Int?) throws {
        let (records, _) = try parse(B.station(bitrate32: u32, bitrate16: u16))
        #expect(records.stations.first?.txBitrateKbps == kbps)
    }

    @Test func anAbsurdRateIsNotPassedOn() throws {
        let (records, _) = try parse(B.station(bitrate32: UInt32.max))
        #expect(WiFiStation(nl80211: try #require(records.stations.first)).txBitrateKbps == nil)
    }

    static let signalChoiceCases: [(Int8, Int8, Int?)] = [
        // (SIGNAL, SIGNAL_AVG, station's dBm): 0 is a driver's "none": the average stands in.
        (-56, -58, -56),
        (0, -58, -58),
        (0, 0, nil),
        (5, -127, nil),
        (-128, -70, -70),
        (127, 127, nil),
    ]

    @Test(arguments: signalChoiceCases)
    func signalChoice(signal: Int8, average: Int8, dbm: Int?) throws {
        let (records, _) = try parse(B.station(signal: signal, average: average))
        let station = try #require(records.stations.first)
        #expect(station.signalDbm == signal)
        #expect(WiFiStation(nl80211: station).signalDbm == dbm)
    }

    @Test func theBeaconAverageComesBeforeTheFrameAverageAsInNetworkManager() throws {
        let record = B.message(command: B.newStation, [B.attribute(B.mac, B.apMAC), B.nest(B.staInfo, [
            B.attribute(B.signal, B.s8(0)), B.attribute(B.signalAvg, B.s8(-71)), B.attribute(B.beaconSignalAvg, B.s8(-64)),
        ])])
        let (records, _) = try parse(record)
        let station = try #require(records.stations.first)
        #expect(station.beaconSignalAverageDbm == -64)
        #expect(WiFiStation(nl80211: station).signalDbm == -64)
    }

    static let associationFlagsCases: [(UInt32, UInt32, Bool?)] = [
        // (mask, set, associated)
        (1 << 7, 1 << 7, true),
        (1 << 7, 0, false),
        (1 << 7 | 1 << 1, 1 << 1, false),
        (1 << 1, 1 << 1 | 1 << 7, nil),   // the mask does not cover ASSOCIATED: not said
    ]

    @Test(arguments: associationFlagsCases)
    func associationFlags(mask: UInt32, set: UInt32, associated: Bool?) throws {
        let (records, _) = try parse(B.station(flags: (mask, set)))
        #expect(records.stations.first?.associated == associated)
    }

    @Test func theFamilyTheSequenceAndControlMessagesSelectWhatIsRead() throws {
        let dump = B.station() + B.message(type: 1, command: B.newStation, []) + B.done()
        #expect(try parse(dump).0.stations.count == 1)
        #expect(try parse(dump, family: B.family + 1).0.stations.isEmpty)
        #expect(try parse(dump, family: nil).0.stations.count == 1)
        #expect(try parse(dump, sequence: 10).0.stations.isEmpty)
        // Another command of the family (NL80211_CMD_NEW_WIPHY = 3) is passed over, not skipped.
        let (records, progress) = try parse(B.message(command: 3, [B.attribute(1, B.u32(0))]))
        #expect(records == NL80211Reply.Records() && progress.skipped == 0)
    }

    @Test func anInterruptedDumpIsFlagged() throws {
        // NLM_F_MULTI | NLM_F_DUMP_INTR
        let (records, progress) = try parse(B.station(messageFlags: 0x2 | 0x10) + B.done())
        #expect(progress.interrupted && progress.done)
        #expect(records.stations.count == 1)
    }

    @Test func theKernelsRefusalsAreErrors() throws {
        let enodev = B.control(type: 2, code: -19)
        #expect(throws: NL80211ReplyError.kernel(errno: 19)) { try parse(enodev) }
        #expect(throws: NL80211ReplyError.kernel(errno: 95)) { try parse(B.station() + B.done(code: -95)) }
        #expect(throws: NL80211ReplyError.kernel(errno: Int32.max)) { try parse(B.control(type: 2, code: Int32.min)) }
        #expect(throws: NL80211ReplyError.overrun) { try parse(B.control(type: 4, code: 0)) }
        // An acknowledgement (errno 0) is not an error; the records around it are read.
        let (records, progress) = try parse(B.station() + B.control(type: 2, code: 0) + B.done())
        #expect(records.stations.count == 1 && progress.done)
        #expect(NL80211ReplyError.kernel(errno: 19).description.contains("errno 19"))
    }

    @Test func errorsSayWhatFailedInNL80211sWords() {
        #expect(NL80211ReplyError.kernel(errno: 19).description == "nl80211: the kernel refused the request (errno 19)")
        #expect(NL80211ReplyError.malformed(offset: 16, problem: "x").description == "nl80211: malformed reply at byte 16: x")
        #expect(NL80211ReplyError.overrun.description == "nl80211: the kernel dropped part of the reply (overrun)")
    }

    @Test func brokenFramingThrows() throws {
        let good = B.station()
        let tooLong = B.u32(UInt32(good.count + 4)) + Array(good.dropFirst(4))
        let huge = B.u32(UInt32.max) + Array(good.dropFirst(4))
        let tooShort = B.u32(8) + Array(good.dropFirst(4))
        for bytes in [tooLong, huge, tooShort, good + [1, 2, 3, 4, 5], good + [0]] {
            #expect(throws: NL80211ReplyError.self) { try parse(bytes) }
        }
        // Fewer bytes than a header after the last message: the offset is in the error.
        #expect(throws: NL80211ReplyError.malformed(offset: good.count, problem: "3 bytes left, less than a message header")) {
            try parse(good + [1, 2, 3])
        }
    }

    /// Records whose attribute lengths break: shorter than the header, past the message.
    static func brokenRecords() -> [(String, [UInt8])] {
        var cases: [(String, [UInt8])] = []
        let station = B.newStation
        cases.append(("length 2", B.message(command: station, [B.u16(2) + B.u16(B.mac) + [0, 0, 0, 0]])))
        cases.append(("length 0", B.message(command: station, [B.u16(0) + B.u16(B.mac)])))
        cases.append(("past the message", B.message(command: station, [B.u16(0xFFFF) + B.u16(B.mac) + B.apMAC])))
        let badSignal: [UInt8] = B.u16(40) + B.u16(B.signal) + [0xC8]
        cases.append(("nest broken", B.message(command: station, [B.attribute(B.staInfo | B.nested, badSignal)])))
        let badRate: [UInt8] = B.attribute(B.txBitrate | B.nested, B.u16(3) + B.u16(B.rateBitrate32))
        cases.append(("rate nest broken", B.message(command: station, [B.nest(B.staInfo, [badRate])])))
        let badSSID: [UInt8] = B.u16(9) + B.u16(B.ssid) + [0x41]
        cases.append(("interface broken", B.message(command: B.newInterface, [badSSID])))
        var headerless: [UInt8] = B.u32(18) + B.u16(B.family) + B.u16(2)
        headerless += B.u32(9) + B.u32(0) + [station, 1, 0, 0]
        cases.append(("no generic header", headerless))
        return cases
    }

    @Test(arguments: brokenRecords())
    func aRecordWithBrokenAttributesIsSkipped(_ name: String, _ record: [UInt8]) throws {
        let (records, progress) = try parse(record + B.station() + B.done())
        #expect(progress.skipped == 1, "\(name)")
        #expect(records.stations.count == 1, "\(name)")
        #expect(records.interfaces.isEmpty, "\(name)")
    }

    @Test func shortAttributesReadAsNotSent() throws {
        let record = B.message(command: B.newStation, [
            B.attribute(B.ifindex, [3, 0]), B.attribute(B.mac, [1, 2, 3, 4]),
            B.nest(B.staInfo, [B.attribute(B.signal, []), B.attribute(B.staFlags, B.u32(B.associated)),
                               B.nest(B.txBitrate, [B.attribute(B.rateBitrate32, [1, 0]), B.attribute(B.rateBitrate, [7])])]),
        ])
        let (records, progress) = try parse(record)
        #expect(progress.skipped == 0)
        #expect(records.stations == [NL80211StationInfo()])
        let interface = B.message(command: B.newInterface, [B.attribute(B.ifindex, []), B.attribute(B.wiphyFreq, [0x14]),
                                                            B.attribute(B.ssid, [UInt8](repeating: 0x41, count: 40))])
        let read = try parse(interface).0.interfaces
        #expect(read == [NL80211InterfaceInfo(ssid: [UInt8](repeating: 0x41, count: 32))])
    }

    /// Every prefix, and every single byte set to 0x00 and to 0xFF, of a real reply: no crash;
    /// a prefix that ends inside a message is refused, whole messages give at most their records.
    @Test func everyTruncationAndCorruptionIsSafe() throws {
        let reply = B.interface() + B.station() + B.done()
        for length in 0...reply.count {
            var records = NL80211Reply.Records()
            _ = try? NL80211Reply.parse(Array(reply.prefix(length)), into: &records)
            #expect(records.stations.count + records.interfaces.count <= 2)
        }
        for index in reply.indices {
            for value: UInt8 in [0x00, 0xFF, 0x80] {
                var bytes = reply
                bytes[index] = value
                var records = NL80211Reply.Records()
                _ = try? NL80211Reply.parse(bytes, into: &records)
                for station in records.stations { _ = WiFiStation(nl80211: station, interface: records.interfaces.first) }
                // A changed length can cut the bytes into other messages, each at least 20 bytes.
                #expect(records.stations.count + records.interfaces.count <= reply.count / 20)
            }
        }
    }

    /// Random bytes, and random attributes inside a valid frame: every one returns or throws.
    @Test func garbageIsSafe() {
        var random = SplitMix64(seed: 0x6E6C_3830_3231_31)
        for _ in 0..<3_000 {
            let count = Int.random(in: 0...200, using: &random)
            let noise = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            var records = NL80211Reply.Records()
            _ = try? NL80211Reply.parse(noise, into: &records)
            let framed = B.message(command: Bool.random(using: &random) ? B.newStation : B.newInterface, [noise])
            _ = try? NL80211Reply.parse(framed, into: &records)
            _ = FuzzTargets.nl80211(framed)
        }
    }

    @Test func theSeedsAreWhatTheyClaim() throws {
        let dump = try #require(try FuzzInputs.inputs("nl80211").first { $0.name == "ok-station-dump" })
        var records = NL80211Reply.Records()
        let progress = try NL80211Reply.parse(dump.bytes, into: &records)
        #expect(progress.done)
        #expect(records.stations.map(\.signalDbm) == [-56])
        let linked = try #require(try FuzzInputs.inputs("nl80211").first { $0.name == "ok-interface-and-station" })
        records = NL80211Reply.Records()
        _ = try NL80211Reply.parse(linked.bytes, into: &records)
        let station = WiFiStation(nl80211: try #require(records.stations.first), interface: records.interfaces.first)
        #expect(station.ssid?.display == "Home" && station.band == .band5GHz && station.bars == 3)
    }
}

extension FuzzRegressionTests {
    @Test func nl80211() throws {
        let inputs = try FuzzInputs.inputs("nl80211")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let read = FuzzTargets.nl80211(input.bytes)
            if input.name.hasPrefix("ok-") { #expect((read ?? 0) >= 1, "\(input.name)") }
        }
    }
}
