/// A Wi-Fi device's connection as its owner reports it: the network, the access point, the
/// channel, the signal and the rate. Every figure is checked when the station is made: one that
/// no radio could report (NaN, a positive dBm, a frequency of 0 or 10 THz, a negative rate)
/// reads as not reported, so that nothing downstream sees it.
public struct WiFiStation: Equatable, Hashable, Sendable {
    /// Who reported it.
    public let owner: WiFiOwner
    /// The network's name; nil when the owner did not say.
    public let ssid: WiFiSSID?
    /// The access point; nil when not reported (or not a usable address).
    public let bssid: WiFiBSSID?
    /// The channel's centre frequency, 1…100 000 MHz; nil otherwise.
    public let frequencyMHz: Int?
    /// The received signal, dBm, within `WiFiSignalScale.validDbm`.
    public let signalDbm: Int?
    /// Strength, 0…100, on NetworkManager's scale: NetworkManager's own figure when it is the
    /// owner (`AccessPoint.Strength`), else computed from `signalDbm` as NetworkManager does
    /// for a connected access point (`WiFiSignalScale.strengthPercent(dbm:)`).
    public let strengthPercent: Int?
    /// The transmit rate, kbit/s, 1 kbit/s … 100 Gbit/s.
    public let txBitrateKbps: Int?

    /// The band of `frequencyMHz`; nil when unknown or outside 2.4, 5 and 6 GHz.
    public var band: WiFiBand? { frequencyMHz.flatMap(WiFiBand.init(frequencyMHz:)) }

    /// Bars, 0–4, with Android's thresholds (`WiFiSignalScale.bars(dbm:band:)`); nil without a
    /// dBm figure (NetworkManager publishes only a percentage: the figure then comes from
    /// nl80211, see `filling(from:)`).
    public var bars: Int? { signalDbm.map { WiFiSignalScale.bars(dbm: $0, band: band) } }

    /// - Parameters:
    ///   - signalDbm: the signal as reported, any double (iwd's `RSSI`, wpa_supplicant's `Signal`,
    ///     nl80211's s8); see `WiFiSignalScale.dbm(_:)`.
    ///   - strengthPercent: a percentage the owner computed itself (NetworkManager's
    ///     `AccessPoint.Strength`); taken when 0…100, else ignored.
    ///   - txBitrateKbps: the rate in kbit/s (iwd's `TxBitrate` and nl80211's rates are in
    ///     100 kbit/s, wpa_supplicant's `SignalPoll` `linkspeed` in Mbit/s, NetworkManager's
    ///     `Bitrate` in kbit/s: the caller converts).
    public init(owner: WiFiOwner, ssid: WiFiSSID? = nil, bssid: WiFiBSSID? = nil, frequencyMHz: Int? = nil,
                signalDbm: Double? = nil, strengthPercent: Int? = nil, txBitrateKbps: Int? = nil) {
        let signal = WiFiSignalScale.dbm(signalDbm)
        self.init(owner: owner, ssid: ssid, bssid: bssid,
                  checkedFrequency: frequencyMHz.flatMap { (1...100_000).contains($0) ? $0 : nil },
                  checkedSignal: signal,
                  checkedStrength: strengthPercent.flatMap { (0...100).contains($0) ? $0 : nil }
                      ?? signal.map(WiFiSignalScale.strengthPercent(dbm:)),
                  checkedBitrate: txBitrateKbps.flatMap { (1...100_000_000).contains($0) ? $0 : nil })
    }

    private init(owner: WiFiOwner, ssid: WiFiSSID?, bssid: WiFiBSSID?, checkedFrequency: Int?, checkedSignal: Int?,
                 checkedStrength: Int?, checkedBitrate: Int?) {
        self.owner = owner; self.ssid = ssid; self.bssid = bssid; frequencyMHz = checkedFrequency
        signalDbm = checkedSignal; strengthPercent = checkedStrength; txBitrateKbps = checkedBitrate
    }

    /// True when both describe one access point: both BSSIDs known and equal.
    public func isSameAccessPoint(as other: WiFiStation) -> Bool {
        guard let bssid, let otherBSSID = other.bssid else { return false }
        return bssid == otherBSSID
    }

    /// This station with the figures it lacks taken from `fallback` (nl80211's station
    /// information under NetworkManager, which publishes no dBm), when both describe the same
    /// access point; figures of another one (read across a roam) are never mixed in. The owner
    /// and every figure this station has stay; a strength it lacks is computed from the signal.
    public func filling(from fallback: WiFiStation) -> WiFiStation {
        guard isSameAccessPoint(as: fallback) else { return self }
        let signal = signalDbm ?? fallback.signalDbm
        return WiFiStation(owner: owner, ssid: ssid ?? fallback.ssid, bssid: bssid,
                           checkedFrequency: frequencyMHz ?? fallback.frequencyMHz, checkedSignal: signal,
                           checkedStrength: strengthPercent ?? signal.map(WiFiSignalScale.strengthPercent(dbm:)),
                           checkedBitrate: txBitrateKbps ?? fallback.txBitrateKbps)
    }
}
