import FoundationEssentials

/// A cellular modem's signal as ModemManager's `Modem.Signal` reports it (varlink type
/// `RadioSignal`); each figure nil when the modem does not report it for its technology.
public struct RadioSignal: Codable, Equatable, Hashable, Sendable {
    /// The technology the figures are for: `gsm`, `umts`, `lte`, `nr5g`, … (the name of
    /// ModemManager's `Modem.Signal` property they were read from).
    public var technology: String
    /// Received signal strength, dBm.
    public var rssi: Double?
    /// LTE/5G reference signal received power, dBm.
    public var rsrp: Double?
    /// LTE/5G reference signal received quality, dB.
    public var rsrq: Double?
    /// Signal to noise (SINR for LTE/5G), dB.
    public var snr: Double?
    /// Bars, 0 (none) to 4 (excellent).
    public var level: Int

    public init(technology: String, rssi: Double? = nil, rsrp: Double? = nil, rsrq: Double? = nil,
                snr: Double? = nil, level: Int) {
        self.technology = technology; self.rssi = rssi; self.rsrp = rsrp; self.rsrq = rsrq
        self.snr = snr; self.level = level
    }

    enum CodingKeys: String, CodingKey { case technology, rssi, rsrp, rsrq, snr, level }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(technology, forKey: .technology); try c.encode(rssi, forKey: .rssi)
        try c.encode(rsrp, forKey: .rsrp); try c.encode(rsrq, forKey: .rsrq)
        try c.encode(snr, forKey: .snr); try c.encode(level, forKey: .level)
    }
}
