import Testing
import TestSupport
@testable import ReachabilityCore

@Suite struct WiFiStationTests {
    static let bands: [(Int, WiFiBand?)] = [
        (2412, .band2_4GHz), (2484, .band2_4GHz), (2411, nil), (2485, nil), (2437, .band2_4GHz),
        (5160, .band5GHz), (5180, .band5GHz), (5885, .band5GHz), (5159, nil), (5886, nil), (4940, nil),
        (5955, .band6GHz), (7115, .band6GHz), (5954, nil), (7116, nil), (60_480, nil),
        (0, nil), (-2412, nil), (Int.max, nil), (Int.min, nil),
    ]

    @Test(arguments: bands)
    func bandFromFrequency(frequency: Int, band: WiFiBand?) {
        #expect(WiFiBand(frequencyMHz: frequency) == band)
    }

    static let ssidDisplayCases: [([UInt8], String)] = [
        ([UInt8]("Home".utf8), "Home"),
        (Array("café".utf8), "café"),
        ([0xF0, 0x9F, 0x93, 0xB6], "📶"),
        ([0x48] + Array("\u{1B}[2J".utf8), "H\\x1b[2J"),
        ([0x00, 0x41], "\\x00A"),
        ([0x7F, 0x0A], "\\x7f\\x0a"),
        (Array("\u{202E}txt.exe".utf8), "\\u{202e}txt.exe"),
        ([0x66, 0xFF, 0x6F], "f\\xffo"),
        ([0xC0, 0xAF], "\\xc0\\xaf"),                        // overlong '/'
        ([0xED, 0xA0, 0x80], "\\xed\\xa0\\x80"),              // a surrogate
        ([0xF4, 0x90, 0x80, 0x80], "\\xf4\\x90\\x80\\x80"),   // past U+10FFFF
        (Array("caf".utf8) + [0xC3], "caf\\xc3"),             // cut in the middle of a character
        ([0xE2, 0x82, 0x41], "\\xe2\\x82A"),
        ([0xC2, 0x9B, 0x41], "\\u{9b}A"),                     // C1 CSI, valid UTF-8
        ([], ""),
    ]

    @Test(arguments: ssidDisplayCases)
    func ssidDisplay(bytes: [UInt8], display: String) {
        let ssid = WiFiSSID(bytes: bytes)
        #expect(ssid.bytes == bytes)
        #expect(ssid.display == display)
        #expect(ssid.description == display)
    }

    @Test func anSSIDKeepsAtMost32Bytes() {
        let long = WiFiSSID(bytes: [UInt8](repeating: 0x61, count: 40))
        #expect(long.bytes.count == 32)
        #expect(long.display == String(repeating: "a", count: 32))
        #expect(WiFiSSID("Home") == WiFiSSID(bytes: Array("Home".utf8)))
        #expect(WiFiSSID(bytes: []).isEmpty)
    }

    /// Any bytes: valid UTF-8 shows as TerminalText shows the string; nothing a terminal acts on
    /// is left in the display; the bytes stay.
    @Test func anyBytesDisplaySafely() {
        var random = SplitMix64(seed: 0x5353_4944)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...32, using: &random)
            let bytes = (0..<count).map { _ in
                // Mostly the bytes of UTF-8 lead and continuation ranges and controls.
                Bool.random(using: &random) ? UInt8.random(in: 0x80...0xF5, using: &random) : UInt8.random(in: 0...0x7F, using: &random)
            }
            let ssid = WiFiSSID(bytes: bytes)
            #expect(ssid.bytes == bytes)
            #expect(!ssid.display.unicodeScalars.contains(where: TerminalText.needsEscape), "\(bytes)")
            if let text = String(validating: bytes, as: UTF8.self) {
                #expect(ssid.display == TerminalText.escaped(text), "\(bytes)")
            }
        }
    }

    static let bssidFromTextCases: [(String, String?)] = [
        ("02:11:22:33:44:55", "02:11:22:33:44:55"),
        ("AA:BB:CC:DD:EE:0F", "aa:bb:cc:dd:ee:0f"),
        ("00:00:00:00:00:00", nil), ("ff:ff:ff:ff:ff:ff", nil),
        ("02:11:22:33:44", nil), ("02:11:22:33:44:55:66", nil), ("02:11:22:33:44:5", nil),
        ("02:11:22:33:44:+5", nil), ("02:11:22:33:44:-5", nil), ("02-11-22-33-44-55", nil), ("", nil),
        ("02:11:22:33:44:5g", nil), ("02:11:22:33:44:٥٥", nil), ("02:11:22:33:44:55\n", nil),
    ]

    @Test(arguments: bssidFromTextCases)
    func bssidFromText(text: String, parsed: String?) {
        #expect(WiFiBSSID(text)?.description == parsed)
    }

    @Test func bssidFromBytes() {
        #expect(WiFiBSSID(bytes: [0x02, 0x11, 0x22, 0x33, 0x44, 0x55])?.description == "02:11:22:33:44:55")
        #expect(WiFiBSSID(bytes: [0x02, 0x11, 0x22, 0x33, 0x44]) == nil)
        #expect(WiFiBSSID(bytes: [UInt8](repeating: 1, count: 7)) == nil)
        #expect(WiFiBSSID(bytes: [UInt8](repeating: 0, count: 6)) == nil)
        #expect(WiFiBSSID(bytes: [UInt8](repeating: 0xFF, count: 6)) == nil)
        #expect(WiFiBSSID(bytes: []) == nil)
    }

    @Test func aStationFromAnOwnersFigures() {
        let station = WiFiStation(owner: .iwd, ssid: WiFiSSID("Home"), bssid: WiFiBSSID("02:11:22:33:44:55"),
                                  frequencyMHz: 5_180, signalDbm: -61, txBitrateKbps: 433_300)
        #expect(station.band == .band5GHz)
        #expect(station.signalDbm == -61)
        #expect(station.strengthPercent == 59)
        #expect(station.bars == 3)
        #expect(station.txBitrateKbps == 433_300)
    }

    /// (frequency, signal, percent reported, rate) as sent → (frequency, dBm, percent, bars, rate) kept.
    static let hostileFigures: [(Int?, Double?, Int?, Int?, Int?, Int?, Int?, Int?, Int?)] = [
        (5_180, -61, nil, 1, 5_180, -61, 59, 3, 1),
        (0, .nan, nil, 0, nil, nil, nil, nil, nil),
        (-5, .infinity, nil, -1, nil, nil, nil, nil, nil),
        (Int.max, 0, nil, Int.max, nil, nil, nil, nil, nil),
        (100_001, 12, nil, 100_000_001, nil, nil, nil, nil, nil),
        (60_480, -40, nil, 100_000_000, 60_480, -40, 80, 4, 100_000_000),
        (2_412, -127, nil, nil, 2_412, nil, nil, nil, nil),
        (2_412, -95, 101, nil, 2_412, -95, 30, 0, nil),      // a percentage past 100 is ignored
        (2_412, -95, -1, nil, 2_412, -95, 30, 0, nil),
        (2_412, nil, 77, nil, 2_412, nil, 77, nil, nil),     // NetworkManager's own figure, no dBm: no bars
        (2_412, -95, 0, nil, 2_412, -95, 0, 0, nil),
    ]

    @Test(arguments: hostileFigures)
    func hostileFiguresReadAsNotReported(frequency: Int?, signal: Double?, percent: Int?, rate: Int?,
                                         keptFrequency: Int?, dbm: Int?, keptPercent: Int?, bars: Int?, keptRate: Int?) {
        let station = WiFiStation(owner: .wpaSupplicant, frequencyMHz: frequency, signalDbm: signal,
                                  strengthPercent: percent, txBitrateKbps: rate)
        #expect(station.frequencyMHz == keptFrequency)
        #expect(station.signalDbm == dbm)
        #expect(station.strengthPercent == keptPercent)
        #expect(station.bars == bars)
        #expect(station.txBitrateKbps == keptRate)
    }

    @Test func networkManagersStationTakesTheKernelsDBmForTheSameAccessPointOnly() {
        let bssid = WiFiBSSID("02:11:22:33:44:55")
        let manager = WiFiStation(owner: .networkManager, ssid: WiFiSSID("Home"), bssid: bssid, frequencyMHz: 5_180,
                                  strengthPercent: 64, txBitrateKbps: 866_000)
        let kernel = WiFiStation(owner: .nl80211, bssid: bssid, frequencyMHz: 5_200, signalDbm: -56, txBitrateKbps: 780_000)
        let filled = manager.filling(from: kernel)
        #expect(filled.owner == .networkManager)
        #expect(filled.signalDbm == -56)
        #expect(filled.bars == 3)
        #expect(filled.strengthPercent == 64)          // NetworkManager's own figure stays
        #expect(filled.frequencyMHz == 5_180 && filled.txBitrateKbps == 866_000)
        #expect(filled.ssid == WiFiSSID("Home"))

        let elsewhere = WiFiStation(owner: .nl80211, bssid: WiFiBSSID("02:11:22:33:44:66"), signalDbm: -40)
        #expect(manager.filling(from: elsewhere) == manager)
        let unknown = WiFiStation(owner: .nl80211, signalDbm: -40)
        #expect(manager.filling(from: unknown) == manager)

        let bare = WiFiStation(owner: .iwd, bssid: bssid)
        let completed = bare.filling(from: kernel)
        #expect(completed.strengthPercent == 63 && completed.frequencyMHz == 5_200 && completed.owner == .iwd)
    }
}
