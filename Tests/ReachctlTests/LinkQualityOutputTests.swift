import Foundation
import ReachabilityClient
import ReachabilityCore
import Testing
@testable import reachctl

/// What `reachctl status`, `status --verbose` and `wait --quality` make of a measured path.
@Suite struct LinkQualityOutputTests {
    static let measuredAt = Date(timeIntervalSince1970: 1_800_000_000)

    static func quality(_ level: LinkQuality.Level, _ type: LinkQuality.EffectiveType?, rtt: Double?, stale: Bool = false,
                        signal: RadioSignal? = nil) -> LinkQuality {
        LinkQuality(level: level, effectiveType: type, rttMs: rtt, minRttMs: rtt.map { $0 * 0.8 }, downlinkKbps: 1234.4,
                    lossPercent: 0.34, samples: 14, source: .passive, measuredAt: measuredAt, stale: stale, signal: signal)
    }

    static func status(primary quality: LinkQuality?, standby: LinkQuality? = nil) -> Status {
        let eth0 = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                             addresses: ["10.0.0.2/24"], metered: false, linkQuality: quality)
        let wwan0 = Interface(name: "wwan0", index: 3, kind: .wwan, up: true, carrier: true, operstate: "up",
                              addresses: ["10.1.0.2/24"], metered: true, linkQuality: standby)
        var status = Status(status: .ethernet, reachable: true, connectivity: .full, primary: eth0, vpn: nil, cellular: nil,
                            expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.0.1"], flags: [.reachable],
                            interfaces: [eth0, wwan0], probe: nil, since: measuredAt, ipv4Connectivity: .full)
        status.linkQuality = quality
        return status
    }

    @Test func summaryNamesTheClassAfterTheVerdict() {
        let status = Self.status(primary: Self.quality(.good, .fourG, rtt: 47.6))
        #expect(Style(enabled: false).summary(status) == "online · ethernet (eth0) · internet: full · IPv4 · quality: good (4g, 48 ms)")
        var stale = status
        stale.linkQuality = Self.quality(.moderate, .threeG, rtt: 420, stale: true)
        #expect(stale.summary(now: Self.measuredAt).contains("quality: moderate (3g, 420 ms, stale)"))
        // Known from the radio alone: no RTT, the source says what it rests on.
        stale.linkQuality = LinkQuality(level: .minimal, source: .radio, measuredAt: Self.measuredAt)
        #expect(stale.summary(now: Self.measuredAt).hasSuffix("quality: minimal (radio)"))
        // A guess from the link's technology says so.
        stale.linkQuality = LinkQuality(level: .good, effectiveType: .fourG, source: .default, measuredAt: Self.measuredAt)
        #expect(stale.summary(now: Self.measuredAt).hasSuffix("quality: good (4g, default)"))
        // Nothing measured: nothing said.
        #expect(!Self.status(primary: nil).summary(now: Self.measuredAt).contains("quality"))
    }

    /// A Wi-Fi primary: its network, band and bars beside its name; the figures under
    /// `--verbose`; a hostile name stays escaped.
    @Test func wifiShowsItsNetworkBandAndBars() {
        var status = Self.status(primary: nil)
        status.status = .wifi
        status.primary?.name = "wlan0"
        status.primary?.kind = .wifi
        status.primary?.wifi = WiFi(ssid: "cafe", bssid: "02:11:22:33:44:55", frequencyMHz: 5180, band: .band5GHz, signalDbm: -61,
                                    strengthPercent: 59, bars: 3, txBitrateKbps: 866_700, owner: .iwd)
        status.interfaces[0] = status.primary!
        #expect(Style(enabled: false).summary(status) == #"online · wifi (wlan0, "cafe", 5 GHz, 3 bars) · internet: full · IPv4"#)
        #expect(status.uplinkLines(now: Self.measuredAt).contains(
            #"  wifi "cafe" · 02:11:22:33:44:55 · 5180 MHz (5 GHz) · -61 dBm · 59 % · 3 bars · 866.7 Mbit/s · from iwd"#))
        status.primary?.wifi = WiFi(ssid: WiFiSSID(bytes: [0x1b, 0x5b, 0x32, 0x4a]).display, bars: 1, owner: .networkManager)
        let line = Style(enabled: false).summary(status)
        #expect(line.contains(#"wifi (wlan0, "\x1b[2J", 1 bar)"#) && !line.unicodeScalars.contains("\u{1b}"))
        status.primary?.wifi = WiFi(owner: .nl80211)
        #expect(Style(enabled: false).summary(status).contains("wifi (wlan0) ·"))
    }

    @Test func verboseListsEachMeasuredUplinkWithItsFigures() {
        let signal = RadioSignal(technology: "lte", rssi: nil, rsrp: -125, rsrq: -14.5, snr: 1, level: 0)
        let status = Self.status(primary: Self.quality(.good, .fourG, rtt: 48),
                                 standby: Self.quality(.minimal, .twoG, rtt: 1400, signal: signal))
        let lines = status.uplinkLines(now: Self.measuredAt.addingTimeInterval(3))
        #expect(lines == [
            "uplink eth0 (ethernet) · primary · internet: full · quality: good (4g, 48 ms)",
            "  rtt 48 ms (min 38 ms) · loss 0.3 % · 1234 kbit/s · 14 samples, passive · 3 s ago",
            "uplink wwan0 (wwan) · standby · quality: minimal (2g, 1400 ms)",
            "  rtt 1400 ms (min 1120 ms) · loss 0.3 % · 1234 kbit/s · 14 samples, passive · 3 s ago"
                + " · signal lte 0/4 (rsrp -125 dBm, rsrq -14.5 dB, snr 1 dB)",
        ])
        // An uplink neither checked nor measured is not an uplink line.
        #expect(Self.status(primary: nil).uplinkLines(now: Self.measuredAt) == ["uplink eth0 (ethernet) · primary · internet: full"])
    }

    @Test(arguments: [
        (LinkQuality.Level?.none, LinkQuality.Level.minimal, false),
        (.unknown, .minimal, false),
        (.minimal, .minimal, true),
        (.minimal, .moderate, false),
        (.moderate, .moderate, true),
        (.good, .moderate, true),
        (.moderate, .good, false),
    ])
    func waitQualityIsAtLeast(_ level: LinkQuality.Level?, _ wanted: LinkQuality.Level, _ met: Bool) {
        let status = Self.status(primary: level.map { Self.quality($0, nil, rtt: nil) })
        #expect(status.satisfies(internet: false, interface: nil, quality: wanted) == met)
        #expect(status.satisfies(internet: false, interface: nil))
        // Not reachable is never met, whatever the last measurement said.
        var offline = status
        offline.reachable = false
        #expect(!offline.satisfies(internet: false, interface: nil, quality: wanted))
    }
}
