/// The scales a Wi-Fi signal (dBm) is shown on: NetworkManager's percentages, so that reachd and
/// GNOME show one number for one link, and Android's bars, the meter people already read off
/// their phones.
public enum WiFiSignalScale {
    /// The signals taken as received ones. Android's `WifiInfo` calls −127 `INVALID_RSSI` and
    /// −126 its `MIN_RSSI`; drivers report 0 (and the hostile anything positive) when they have no
    /// reading, and a received Wi-Fi signal is never 0 dBm (1 mW) or more at a station.
    public static let validDbm: ClosedRange<Int> = -126 ... -1

    /// A daemon's or the kernel's figure as a received signal in whole dBm, truncated toward zero
    /// as NetworkManager's C conversion does; nil for NaN, infinities and anything outside
    /// `validDbm`.
    public static func dbm(_ value: Double?) -> Int? {
        guard let value, value.isFinite, value > -1_000, value < 1_000 else { return nil }
        let whole = Int(value.rounded(.towardZero))
        return validDbm.contains(whole) ? whole : nil
    }

    /// The connected access point's strength in percent, as NetworkManager computes it for the
    /// `Strength` of the access point a device is connected to: its `nl80211_xbm_to_percent` in
    /// libnm-platform's nl80211 Wi-Fi utilities (NOISE_FLOOR_DBM −90, SIGNAL_MAX_DBM −20; the
    /// station's signal clamped to that range and mapped linearly onto 30…100). NetworkManager
    /// refreshes the current access point's `Strength` from nl80211 station information with
    /// this function every few seconds, and GNOME's indicator shows that property.
    ///
    /// The arithmetic is single precision, as there, so that every figure matches: −56 dBm gives
    /// 63 (70 × 36/70 rounds to just under 36 in `float`), not 64.
    public static func strengthPercent(dbm: Int) -> Int {
        let noiseFloor: Float = -90, signalMax: Float = -20
        let clamped = Float(min(max(dbm, -90), -20))
        let percent = Float(100) - Float(70) * ((signalMax - clamped) / (signalMax - noiseFloor))
        return Int(percent)   // C's conversion to guint32: truncation
    }

    /// A scanned access point's strength in percent, as NetworkManager computes it from
    /// wpa_supplicant's `BSS.Signal` for the access points it lists: its
    /// `nm_wifi_utils_level_to_quality` (the signal clamped to −100…−40 dBm and mapped onto
    /// 0…100, `100 - (int)(100.0 * |dBm + 40| / 60.0)`). Not the connected access point's scale
    /// (`strengthPercent(dbm:)`); kept for lists of networks.
    public static func scanStrengthPercent(dbm: Int) -> Int {
        let distance = abs(min(max(dbm, -100), -40) + 40)
        return 100 - Int(100.0 * Double(distance) / 60.0)
    }

    /// Android's signal-level thresholds (dBm), the default of the Wi-Fi module's
    /// `config_wifiRssiLevelThresholds` resource that `WifiManager.calculateSignalLevel` and
    /// the status bar use: a signal at or above the n-th threshold has n bars.
    public static let barThresholds = [-88, -77, -66, -55]

    /// The bar thresholds for a band. Android uses one table for every band: its per-band
    /// figures (`config_wifi_framework_wifi_score_{bad,entry,low,good}_rssi_threshold_24GHz` and
    /// `…_5GHz`, `config_wifiFrameworkScore…Threshold6ghz`) steer network selection and scoring,
    /// never the bars shown. The band is a parameter so that a band-specific table stays a
    /// change here.
    public static func barThresholds(for band: WiFiBand?) -> [Int] {
        switch band {
        case .band2_4GHz?, .band5GHz?, .band6GHz?, nil: barThresholds
        }
    }

    /// Bars, 0 to 4, for a received signal on `band` (any band when unknown).
    public static func bars(dbm: Int, band: WiFiBand?) -> Int {
        barThresholds(for: band).filter { dbm >= $0 }.count
    }

    /// The thresholds reachd gives iwd's `Station.RegisterSignalLevelAgent` (int16 dBm,
    /// descending as iwd requires): the bar edges, so that iwd calls the agent exactly when the
    /// bars change.
    public static let iwdAgentLevels: [Int16] = barThresholds.reversed().map { Int16($0) }

    /// Bars from the level iwd passes to `SignalLevelAgent.Changed` for the thresholds
    /// `iwdAgentLevels`: level 0 is at or above the first (−55 dBm, 4 bars), level 4 below the
    /// last (−88 dBm, 0 bars). Nil for a level beyond the thresholds given.
    public static func bars(iwdAgentLevel level: Int) -> Int? {
        guard (0...iwdAgentLevels.count).contains(level) else { return nil }
        return iwdAgentLevels.count - level
    }
}
