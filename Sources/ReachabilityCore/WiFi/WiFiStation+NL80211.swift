extension WiFiStation {
    /// The station nl80211 describes: the access point's record of a station dump and, when
    /// given, the interface's record (its SSID and channel, which station records lack).
    ///
    /// The signal is the one NetworkManager reads for the same purpose, so that the percentages
    /// agree: the last frame's (`NL80211_STA_INFO_SIGNAL`), else the beacons' average; then the
    /// average of all frames, which NetworkManager does not read. A figure outside the valid
    /// range (drivers send 0 for none) passes to the next.
    public init(nl80211 station: NL80211StationInfo, interface: NL80211InterfaceInfo? = nil) {
        let signal = [station.signalDbm, station.beaconSignalAverageDbm, station.signalAverageDbm]
            .lazy.compactMap { $0 }.map(Int.init).first { WiFiSignalScale.validDbm.contains($0) }
        self.init(owner: .nl80211,
                  ssid: interface?.ssid.map { WiFiSSID(bytes: $0) },
                  bssid: station.mac.flatMap { WiFiBSSID(bytes: $0) },
                  frequencyMHz: interface?.frequencyMHz.map(Int.init),
                  signalDbm: signal.map(Double.init),
                  txBitrateKbps: station.txBitrateKbps)
    }
}
