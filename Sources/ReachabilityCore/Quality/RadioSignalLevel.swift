/// Signal bars (0–4) from a cellular radio's figures, with Android's default thresholds: the
/// scale people already read off their phones, and one that carriers tuned for a decade.
///
/// The thresholds and valid ranges are those of the Android Open Source Project's
/// `android.telephony.CellSignalStrengthLte`, `…Nr`, `…Wcdma`, `…Gsm` and `…Cdma` classes
/// (their defaults, without a carrier configuration): a figure at a threshold has that
/// threshold's level (`>=`), a figure outside the valid range counts as not reported (Android's
/// `inRangeOrUnavailable`), and so do NaN and infinities. Each function returns nil when none of
/// the figures it uses is reported.
public enum RadioSignalLevel {
    /// LTE: RSRP (dBm, valid −140…−44) at −115/−105/−95/−85, as Android by default uses RSRP
    /// alone; without it, RSSI (dBm, valid −113…−51) at −113/−103/−97/−89.
    public static func lte(rsrp: Double?, rssi: Double?) -> Int? {
        bars(rsrp, thresholds: [-115, -105, -95, -85], valid: -140 ... -44)
            ?? bars(rssi, thresholds: [-113, -103, -97, -89], valid: -113 ... -51)
    }

    /// 5G NR: SS-RSRP (dBm, valid −140…−44) at −110/−90/−80/−65, Android's default; without it,
    /// SS-SINR (dB, valid −23…40) at −5/5/15/30.
    public static func nr(rsrp: Double?, sinr: Double?) -> Int? {
        bars(rsrp, thresholds: [-110, -90, -80, -65], valid: -140 ... -44)
            ?? bars(sinr, thresholds: [-5, 5, 15, 30], valid: -23 ... 40)
    }

    /// UMTS (WCDMA): RSCP (dBm, valid −120…−24) at −115/−105/−95/−85 when the modem reports it,
    /// else RSSI (dBm, valid −113…−51) at −107/−97/−87/−77 (Android's two WCDMA methods).
    public static func umts(rscp: Double?, rssi: Double?) -> Int? {
        bars(rscp, thresholds: [-115, -105, -95, -85], valid: -120 ... -24)
            ?? bars(rssi, thresholds: [-107, -97, -87, -77], valid: -113 ... -51)
    }

    /// GSM: RSSI (dBm, valid −113…−51) at −107/−103/−97/−89.
    public static func gsm(rssi: Double?) -> Int? {
        bars(rssi, thresholds: [-107, -103, -97, -89], valid: -113 ... -51)
    }

    /// CDMA 1x: the lower of RSSI (dBm, valid −120…0) at −100/−95/−85/−75 and Ec/Io (dB, valid
    /// −16…0) at −15/−13/−11/−9, either alone when the other is not reported.
    public static func cdma(rssi: Double?, ecio: Double?) -> Int? {
        lowest(bars(rssi, thresholds: [-100, -95, -85, -75], valid: -120 ... 0),
               bars(ecio, thresholds: [-15, -13, -11, -9], valid: -16 ... 0))
    }

    /// CDMA EV-DO: RSSI (dBm, valid −120…0) at −105/−90/−75/−65. (Android's EV-DO SNR is on a
    /// 0–8 scale of its own, not ModemManager's dB, so it is not used.)
    public static func evdo(rssi: Double?) -> Int? {
        bars(rssi, thresholds: [-105, -90, -75, -65], valid: -120 ... 0)
    }

    /// How many of `thresholds` (ascending) `value` reaches; nil when it is absent or outside
    /// `valid` (NaN is never inside).
    static func bars(_ value: Double?, thresholds: [Double], valid: ClosedRange<Double>) -> Int? {
        guard let value, valid.contains(value) else { return nil }
        return thresholds.filter { value >= $0 }.count
    }

    private static func lowest(_ a: Int?, _ b: Int?) -> Int? {
        switch (a, b) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
    }
}

extension RadioSignal {
    /// The technologies of `Modem.Signal`, newest first (the order `allCases` lists them in).
    enum ModemManagerTechnology: String, CaseIterable {
        case nr5g, lte, umts, evdo, cdma, gsm

        /// The D-Bus property name.
        var property: String {
            switch self {
            case .nr5g: "Nr5g"
            case .lte: "Lte"
            case .umts: "Umts"
            case .evdo: "Evdo"
            case .cdma: "Cdma"
            case .gsm: "Gsm"
            }
        }
    }

    /// The signal of the newest technology whose figures give a level, from the properties of
    /// ModemManager's `org.freedesktop.ModemManager1.Modem.Signal` interface (each technology an
    /// `a{sv}` of doubles: `rssi`, `rscp`, `ecio`, `rsrp`, `rsrq`, `snr`, `sinr`, `io`,
    /// `error-rate`). Nil when no technology reports one: ModemManager sends empty dictionaries
    /// until `Setup` or `SetupThresholds` enabled the readings.
    ///
    /// A technology whose dictionary holds only figures the level does not use (RSRQ alone, say)
    /// does not count as reporting: a level of 0 would read as "no signal". The figures kept are
    /// those inside their valid ranges (see `RadioSignalLevel`); the others read as not reported.
    public init?(modemManagerSignal properties: [String: DBusValue]) {
        for kind in ModemManagerTechnology.allCases {
            let technology = kind.rawValue
            guard let values = properties[kind.property]?.dictionary, !values.isEmpty else { continue }
            func figure(_ key: String, _ valid: ClosedRange<Double>) -> Double? {
                guard let value = values[key]?.number, valid.contains(value) else { return nil }
                return value
            }
            let signal: RadioSignal?
            switch kind {
            case .nr5g:
                let rsrp = figure("rsrp", -140 ... -44), snr = figure("snr", -23 ... 40) ?? figure("sinr", -23 ... 40)
                signal = RadioSignalLevel.nr(rsrp: rsrp, sinr: snr).map {
                    RadioSignal(technology: technology, rsrp: rsrp, rsrq: figure("rsrq", -43 ... 20), snr: snr, level: $0)
                }
            case .lte:
                let rsrp = figure("rsrp", -140 ... -44), rssi = figure("rssi", -113 ... -51)
                signal = RadioSignalLevel.lte(rsrp: rsrp, rssi: rssi).map {
                    RadioSignal(technology: technology, rssi: rssi, rsrp: rsrp, rsrq: figure("rsrq", -34 ... 3),
                                snr: figure("snr", -20 ... 30), level: $0)
                }
            case .umts:
                let rssi = figure("rssi", -113 ... -51)
                signal = RadioSignalLevel.umts(rscp: figure("rscp", -120 ... -24), rssi: rssi).map {
                    RadioSignal(technology: technology, rssi: rssi, level: $0)
                }
            case .evdo:
                let rssi = figure("rssi", -120 ... 0)
                signal = RadioSignalLevel.evdo(rssi: rssi).map {
                    RadioSignal(technology: technology, rssi: rssi, snr: figure("sinr", -20 ... 40), level: $0)
                }
            case .cdma:
                let rssi = figure("rssi", -120 ... 0)
                signal = RadioSignalLevel.cdma(rssi: rssi, ecio: figure("ecio", -16 ... 0)).map {
                    RadioSignal(technology: technology, rssi: rssi, level: $0)
                }
            case .gsm:
                let rssi = figure("rssi", -113 ... -51)
                signal = RadioSignalLevel.gsm(rssi: rssi).map { RadioSignal(technology: technology, rssi: rssi, level: $0) }
            }
            if let signal {
                self = signal
                return
            }
        }
        return nil
    }
}

extension DBusValue {
    /// A number of any D-Bus numeric type as a double (ModemManager sends `d`; a peer sending
    /// integers means the same figure), or nil.
    var number: Double? {
        switch unwrapped {
        case let .double(value): value
        case let .int16(value): Double(value)
        case let .uint16(value): Double(value)
        case let .int32(value): Double(value)
        case let .uint32(value): Double(value)
        case let .int64(value): Double(value)
        case let .uint64(value): Double(value)
        case .byte, .bool, .string, .objectPath, .signature, .unixFD, .array, .dictEntry, .structure, .variant: nil
        }
    }
}
