/// One station record of an nl80211 station reply (`NL80211_CMD_NEW_STATION`, the answer to
/// `NL80211_CMD_GET_STATION`): on a managed-mode interface, the access point it is associated
/// with. Each field nil when the kernel did not send it or sent it too short.
public struct NL80211StationInfo: Equatable, Hashable, Sendable {
    /// `NL80211_ATTR_IFINDEX`: the interface the record is for.
    public var ifindex: Int?
    /// `NL80211_ATTR_MAC`: the station's (the access point's) address, as sent.
    public var mac: [UInt8]?
    /// `NL80211_STA_INFO_SIGNAL`: signal of the last received PPDU, dBm (u8 read as s8).
    public var signalDbm: Int8?
    /// `NL80211_STA_INFO_SIGNAL_AVG`: the signal's average, dBm.
    public var signalAverageDbm: Int8?
    /// `NL80211_STA_INFO_BEACON_SIGNAL_AVG`: the beacons' average signal, dBm.
    public var beaconSignalAverageDbm: Int8?
    /// `NL80211_STA_INFO_TX_BITRATE`: the unicast transmit rate, kbit/s (from
    /// `NL80211_RATE_INFO_BITRATE32`, else `NL80211_RATE_INFO_BITRATE`, both in 100 kbit/s).
    public var txBitrateKbps: Int?
    /// `NL80211_STA_INFO_RX_BITRATE`: the rate of the last unicast frame received, kbit/s.
    public var rxBitrateKbps: Int?
    /// `NL80211_STA_INFO_STA_FLAGS`: whether the station is associated, when the flags' mask
    /// covers `NL80211_STA_FLAG_ASSOCIATED` (NetworkManager skips records whose flags say not).
    public var associated: Bool?

    public init(ifindex: Int? = nil, mac: [UInt8]? = nil, signalDbm: Int8? = nil, signalAverageDbm: Int8? = nil,
                beaconSignalAverageDbm: Int8? = nil, txBitrateKbps: Int? = nil, rxBitrateKbps: Int? = nil,
                associated: Bool? = nil) {
        self.ifindex = ifindex; self.mac = mac; self.signalDbm = signalDbm; self.signalAverageDbm = signalAverageDbm
        self.beaconSignalAverageDbm = beaconSignalAverageDbm; self.txBitrateKbps = txBitrateKbps
        self.rxBitrateKbps = rxBitrateKbps; self.associated = associated
    }
}
