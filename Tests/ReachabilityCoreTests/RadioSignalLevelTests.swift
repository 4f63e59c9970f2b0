import Testing
@testable import ReachabilityCore

// ModemManager's Modem.Signal property of one technology: an a{sv} of doubles.
private func technology(_ pairs: KeyValuePairs<String, Double>) -> DBusValue {
    .array(pairs.map { .dictEntry(.string($0.key), .variant(.double($0.value))) })
}
private let empty: DBusValue = .array([])

/// Modem.Signal as ModemManager sends it before anything was set up: every technology empty.
private func signalProperties(_ overrides: [String: DBusValue] = [:]) -> [String: DBusValue] {
    var properties: [String: DBusValue] = ["Rate": .uint32(0), "RssiThreshold": .uint32(0), "ErrorRateThreshold": .bool(false)]
    for name in ["Cdma", "Evdo", "Gsm", "Umts", "Lte", "Nr5g"] { properties[name] = empty }
    properties.merge(overrides) { _, new in new }
    return properties
}

@Suite struct RadioSignalLevelTests {
    @Test("LTE RSRP, Android's −115/−105/−95/−85 dBm", arguments: [
        (-125.0, 0), (-115.01, 0), (-115, 1), (-110, 1), (-105.01, 1), (-105, 2), (-95.5, 2), (-95, 3),
        (-85.01, 3), (-85, 4), (-60, 4), (-44, 4),
    ])
    func lteRsrp(rsrp: Double, level: Int) {
        #expect(RadioSignalLevel.lte(rsrp: rsrp, rssi: nil) == level)
    }

    @Test("NR SS-RSRP, Android's −110/−90/−80/−65 dBm", arguments: [
        (-120.0, 0), (-110.5, 0), (-110, 1), (-90.1, 1), (-90, 2), (-80, 3), (-65.1, 3), (-65, 4),
    ])
    func nrRsrp(rsrp: Double, level: Int) {
        #expect(RadioSignalLevel.nr(rsrp: rsrp, sinr: nil) == level)
    }

    @Test("GSM RSSI, Android's −107/−103/−97/−89 dBm", arguments: [
        (-113.0, 0), (-107.5, 0), (-107, 1), (-103, 2), (-97.5, 2), (-97, 3), (-89, 4), (-51, 4),
    ])
    func gsmRssi(rssi: Double, level: Int) {
        #expect(RadioSignalLevel.gsm(rssi: rssi) == level)
    }

    @Test("UMTS RSCP before RSSI", arguments: [
        (Double?(-116), Double?(-60), 0), (-115, nil, 1), (-95, -110, 3), (-85, nil, 4),
        (nil, -108, 0), (nil, -107, 1), (nil, -97, 2), (nil, -87, 3), (nil, -77, 4),
    ])
    func umts(rscp: Double?, rssi: Double?, level: Int) {
        #expect(RadioSignalLevel.umts(rscp: rscp, rssi: rssi) == level)
    }

    @Test func cdmaTakesTheLowerOfRssiAndEcio() {
        #expect(RadioSignalLevel.cdma(rssi: -70, ecio: nil) == 4)
        #expect(RadioSignalLevel.cdma(rssi: -70, ecio: -12) == 2)
        #expect(RadioSignalLevel.cdma(rssi: -98, ecio: -5) == 1)
        #expect(RadioSignalLevel.cdma(rssi: nil, ecio: -9) == 4)
        #expect(RadioSignalLevel.evdo(rssi: -80) == 2)
    }

    @Test("absent, NaN, infinite and out-of-range figures are not reported", arguments: [
        Double.nan, .infinity, -.infinity, -141, -43, -Double.greatestFiniteMagnitude,
    ])
    func unusableFigures(rsrp: Double) {
        #expect(RadioSignalLevel.lte(rsrp: rsrp, rssi: nil) == nil)
        #expect(RadioSignalLevel.nr(rsrp: rsrp, sinr: nil) == nil)
        // A bad RSRP does not hide the RSSI beside it.
        #expect(RadioSignalLevel.lte(rsrp: rsrp, rssi: -100) == 2)
    }

    @Test func nothingReportedIsNil() {
        #expect(RadioSignalLevel.lte(rsrp: nil, rssi: nil) == nil)
        #expect(RadioSignalLevel.gsm(rssi: nil) == nil)
        #expect(RadioSignalLevel.cdma(rssi: nil, ecio: nil) == nil)
    }

    /// The level never falls as the figure rises, over the whole valid range of each.
    @Test func levelsAreMonotone() {
        var previous = (lte: 0, nr: 0, gsm: 0, umts: 0)
        for tenth in stride(from: -1400, through: -440, by: 1) {
            let dBm = Double(tenth) / 10
            let lte = RadioSignalLevel.lte(rsrp: dBm, rssi: nil) ?? -1
            let nr = RadioSignalLevel.nr(rsrp: dBm, sinr: nil) ?? -1
            #expect(lte >= previous.lte && (0 ... 4).contains(lte), "LTE at \(dBm)")
            #expect(nr >= previous.nr && (0 ... 4).contains(nr), "NR at \(dBm)")
            previous.lte = lte; previous.nr = nr
            if (-113 ... -51).contains(dBm) {
                let gsm = RadioSignalLevel.gsm(rssi: dBm) ?? -1, umts = RadioSignalLevel.umts(rscp: nil, rssi: dBm) ?? -1
                #expect(gsm >= previous.gsm && (0 ... 4).contains(gsm), "GSM at \(dBm)")
                #expect(umts >= previous.umts && (0 ... 4).contains(umts), "UMTS at \(dBm)")
                previous.gsm = gsm; previous.umts = umts
            }
        }
    }

    // MARK: - From Modem.Signal

    @Test func lteAtMinus125IsLevelZero() throws {
        let signal = try #require(RadioSignal(modemManagerSignal: signalProperties([
            "Lte": technology(["rssi": -95, "rsrp": -125, "rsrq": -18, "snr": -4, "error-rate": 0.5]),
        ])))
        #expect(signal == RadioSignal(technology: "lte", rssi: -95, rsrp: -125, rsrq: -18, snr: -4, level: 0))
    }

    @Test func emptyDictionariesGiveNoSignal() {
        #expect(RadioSignal(modemManagerSignal: signalProperties()) == nil)
        #expect(RadioSignal(modemManagerSignal: [:]) == nil)
    }

    @Test func theNewestReportingTechnologyWins() throws {
        // 5G NSA: LTE anchor and NR both report; NR is the newer.
        let nsa = try #require(RadioSignal(modemManagerSignal: signalProperties([
            "Lte": technology(["rsrp": -100]), "Nr5g": technology(["rsrp": -85, "rsrq": -11, "snr": 12]),
        ])))
        #expect(nsa == RadioSignal(technology: "nr5g", rsrp: -85, rsrq: -11, snr: 12, level: 2))

        let umts = try #require(RadioSignal(modemManagerSignal: signalProperties([
            "Gsm": technology(["rssi": -60]), "Umts": technology(["rssi": -90, "rscp": -100, "ecio": -6]),
        ])))
        #expect(umts == RadioSignal(technology: "umts", rssi: -90, level: 2))

        let gsm = try #require(RadioSignal(modemManagerSignal: signalProperties(["Gsm": technology(["rssi": -99])])))
        #expect(gsm == RadioSignal(technology: "gsm", rssi: -99, level: 2))

        let cdma = try #require(RadioSignal(modemManagerSignal: signalProperties(["Cdma": technology(["rssi": -80, "ecio": -10])])))
        #expect(cdma == RadioSignal(technology: "cdma", rssi: -80, level: 3))
    }

    /// A technology with figures that give no level (RSRQ alone, NaN, ModemManager's "unknown"
    /// −DBL_MAX) does not count: the next one that does is taken, else nothing.
    @Test func aTechnologyWithoutUsableFiguresIsSkipped() throws {
        let skipped = try #require(RadioSignal(modemManagerSignal: signalProperties([
            "Nr5g": technology(["rsrq": -10]), "Lte": technology(["rsrp": .nan, "rssi": -70, "snr": .infinity]),
        ])))
        #expect(skipped == RadioSignal(technology: "lte", rssi: -70, level: 4))
        #expect(RadioSignal(modemManagerSignal: signalProperties([
            "Lte": technology(["rsrp": -Double.greatestFiniteMagnitude, "rsrq": -10]),
        ])) == nil)
    }

    /// Garbage of the wrong type reads as not reported; integers are taken as the figures they are.
    @Test func wrongTypesAreIgnored() throws {
        #expect(RadioSignal(modemManagerSignal: signalProperties(["Lte": .string("strong")])) == nil)
        #expect(RadioSignal(modemManagerSignal: signalProperties([
            "Lte": .array([.dictEntry(.string("rsrp"), .variant(.string("-90")))]),
        ])) == nil)
        let integer = try #require(RadioSignal(modemManagerSignal: signalProperties([
            "Lte": .array([.dictEntry(.string("rsrp"), .variant(.int32(-90)))]),
        ])))
        #expect(integer.level == 3 && integer.rsrp == -90)
    }

    /// The model hands the signal to the modem it belongs to, and follows PropertiesChanged of
    /// the Signal interface.
    @Test func theModelFillsModemStateSignal() throws {
        let path = "/org/freedesktop/ModemManager1/Modem/0"
        func props(_ pairs: [String: DBusValue]) -> DBusValue {
            .array(pairs.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
        }
        let modem = props(["AccessTechnologies": .uint32(1 << 14), "Ports": .array([.structure([.string("wwan0"), .uint32(2)])]),
                           "Bearers": .array([])])
        let tree: DBusValue = .array([.dictEntry(.objectPath(path), .array([
            .dictEntry(.string(ModemManagerDBus.modemInterface), modem),
            .dictEntry(.string(ModemManagerDBus.signalInterface), props(signalProperties())),
        ]))])
        var model = ModemManagerModel()
        expectApplied(model.apply(managedObjects: [tree]))
        #expect(model.modems.first?.signal == nil)

        expectApplied(model.apply(signal: "PropertiesChanged", path: path, arguments: [
            .string(ModemManagerDBus.signalInterface), props(["Lte": technology(["rsrp": -125])]), .array([]),
        ]))
        #expect(model.modems.first?.signal == RadioSignal(technology: "lte", rsrp: -125, level: 0))

        expectApplied(model.apply(signal: "PropertiesChanged", path: path, arguments: [
            .string(ModemManagerDBus.signalInterface), props(["Lte": technology(["rsrp": -90])]), .array([]),
        ]))
        #expect(model.modems.first?.signal == RadioSignal(technology: "lte", rsrp: -90, level: 3))

        // The interface going away takes the signal with it; the modem stays.
        expectApplied(model.apply(signal: "InterfacesRemoved", path: ModemManagerDBus.path, arguments: [
            .objectPath(path), .array([.string(ModemManagerDBus.signalInterface)]),
        ]))
        #expect(model.modems.map(\.path) == [path])
        #expect(model.modems.first?.signal == nil)
    }
}

/// `#expect` cannot take a mutating call; this can.
private func expectApplied(_ value: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value, sourceLocation: sourceLocation)
}
