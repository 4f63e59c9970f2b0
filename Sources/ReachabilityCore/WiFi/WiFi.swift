import FoundationEssentials

/// A Wi-Fi interface's connection as its owner reports it (varlink type `WiFi`, the
/// `Interface.wifi` of a connected Wi-Fi device): the network, the access point, the channel,
/// the signal on NetworkManager's and Android's scales, and the rate. Made from the arbitrated
/// `WiFiStation`; every figure is one no radio could contradict (see `WiFiStation`).
///
/// Only `ssid`, `bssid` and `bars` make an event when they change (`differsAsShown`): the
/// signal, strength, rate, channel and owner move quietly with the next event or read.
public struct WiFi: Codable, Equatable, Hashable, Sendable {
    /// The network's name for eyes (`WiFiSSID.display`: control characters, bidirectional
    /// overrides and invalid UTF-8 escaped); nil when the owner did not say.
    public var ssid: String?
    /// The access point, `aa:bb:cc:dd:ee:ff`: location data, sent to root callers only.
    public var bssid: String?
    /// The channel's centre frequency, MHz.
    public var frequencyMHz: Int?
    /// `2.4GHz`, `5GHz` or `6GHz`; nil outside those bands or without a frequency.
    public var band: WiFiBand?
    /// The received signal, dBm.
    public var signalDbm: Int?
    /// 0–100 on NetworkManager's scale (GNOME shows the same figure).
    public var strengthPercent: Int?
    /// 0–4 with Android's thresholds; nil without a dBm figure.
    public var bars: Int?
    /// The transmit rate, kbit/s.
    public var txBitrateKbps: Int?
    /// Who reported it: the owner that won the arbitration.
    public var owner: WiFiOwner

    public init(ssid: String? = nil, bssid: String? = nil, frequencyMHz: Int? = nil, band: WiFiBand? = nil,
                signalDbm: Int? = nil, strengthPercent: Int? = nil, bars: Int? = nil, txBitrateKbps: Int? = nil,
                owner: WiFiOwner) {
        self.ssid = ssid; self.bssid = bssid; self.frequencyMHz = frequencyMHz; self.band = band
        self.signalDbm = signalDbm; self.strengthPercent = strengthPercent; self.bars = bars
        self.txBitrateKbps = txBitrateKbps; self.owner = owner
    }

    /// The station as a status shows it.
    public init(_ station: WiFiStation) {
        self.init(ssid: station.ssid?.display, bssid: station.bssid?.description, frequencyMHz: station.frequencyMHz,
                  band: station.band, signalDbm: station.signalDbm, strengthPercent: station.strengthPercent,
                  bars: station.bars, txBitrateKbps: station.txBitrateKbps, owner: station.owner)
    }

    /// True when an event reports the difference: presence, the network, the access point or
    /// the bars. Signal, strength, rate, channel and owner alone are figures that make no event.
    public static func differsAsShown(_ a: WiFi?, _ b: WiFi?) -> Bool {
        guard let a, let b else { return (a == nil) != (b == nil) }
        return a.ssid != b.ssid || a.bssid != b.bssid || a.bars != b.bars
    }

    /// The radio's figures as link quality takes them (`source: radio`, capped at `minimal` at
    /// one bar or none, as a modem's); nil without bars.
    public var radioSignal: RadioSignal? {
        bars.map { RadioSignal(technology: "wifi", rssi: signalDbm.map(Double.init), level: $0) }
    }

    enum CodingKeys: String, CodingKey {
        case ssid, bssid, frequencyMHz, band, signalDbm, strengthPercent, bars, txBitrateKbps, owner
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(ssid: try c.decodeIfPresent(String.self, forKey: .ssid),
                  bssid: try c.decodeIfPresent(String.self, forKey: .bssid),
                  frequencyMHz: try c.decodeIfPresent(Int.self, forKey: .frequencyMHz),
                  // A band or owner a newer daemon names reads as unknown, not as a broken status.
                  band: try c.decodeIfPresent(String.self, forKey: .band).flatMap(WiFiBand.init(rawValue:)),
                  signalDbm: try c.decodeIfPresent(Int.self, forKey: .signalDbm),
                  strengthPercent: try c.decodeIfPresent(Int.self, forKey: .strengthPercent),
                  bars: try c.decodeIfPresent(Int.self, forKey: .bars),
                  txBitrateKbps: try c.decodeIfPresent(Int.self, forKey: .txBitrateKbps),
                  owner: WiFiOwner(rawValue: try c.decode(String.self, forKey: .owner)) ?? .nl80211)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ssid, forKey: .ssid); try c.encode(bssid, forKey: .bssid)
        try c.encode(frequencyMHz, forKey: .frequencyMHz); try c.encode(band?.rawValue, forKey: .band)
        try c.encode(signalDbm, forKey: .signalDbm); try c.encode(strengthPercent, forKey: .strengthPercent)
        try c.encode(bars, forKey: .bars); try c.encode(txBitrateKbps, forKey: .txBitrateKbps)
        try c.encode(owner.rawValue, forKey: .owner)
    }
}

/// One Wi-Fi device as the monitor is told of it: the owner that speaks for it
/// (`WiFiOwnerArbiter`), the state it reports, and the connection when there is one.
public struct WiFiDevice: Equatable, Hashable, Sendable {
    /// The network interface's name (`wlan0`).
    public var interface: String
    public var owner: WiFiOwner
    public var state: WiFiLinkState
    /// The connection, while connected (or roaming).
    public var station: WiFiStation?

    public init(interface: String, owner: WiFiOwner, state: WiFiLinkState, station: WiFiStation? = nil) {
        self.interface = interface; self.owner = owner; self.state = state; self.station = station
    }

    /// A daemon manages the device: it is Wi-Fi whatever sysfs says.
    public var isManagedAsWiFi: Bool { owner != .nl80211 && state.manages }

    /// The devices the owners' claims describe, by interface name, each its arbitration's
    /// winner (`WiFiOwnerArbiter.winner`); sorted by name. A claim whose state is not connected
    /// carries no station.
    public static func arbitrate(_ claims: [String: [WiFiOwnerClaim]]) -> [WiFiDevice] {
        claims.keys.sorted().compactMap { name in
            guard let all = claims[name], let winner = WiFiOwnerArbiter.winner(all) else { return nil }
            let station = winner.state.isConnected || winner.owner == .nl80211 ? winner.station : nil
            return WiFiDevice(interface: name, owner: winner.owner, state: winner.state, station: station)
        }
    }
}
