import Testing
import TestSupport
@testable import ReachabilityCore

@Suite struct WiFiSignalScaleTests {
    /// NetworkManager's two functions, copied unchanged from its source
    /// (`nl80211_xbm_to_percent` with divisor 1, `nm_wifi_utils_level_to_quality`) into a C
    /// program built with gcc on x86-64, print "dBm:connected/scan" for −128…0 dBm: this table.
    /// Every figure must match, the float rounding at −56 dBm (63, not 64) included.
    static let networkManagerTable = """
        -128:30/0 -127:30/0 -126:30/0 -125:30/0 -124:30/0 -123:30/0 -122:30/0 -121:30/0 -120:30/0
        -119:30/0 -118:30/0 -117:30/0 -116:30/0 -115:30/0 -114:30/0 -113:30/0 -112:30/0 -111:30/0
        -110:30/0 -109:30/0 -108:30/0 -107:30/0 -106:30/0 -105:30/0 -104:30/0 -103:30/0 -102:30/0
        -101:30/0 -100:30/0 -99:30/2 -98:30/4 -97:30/5 -96:30/7 -95:30/9 -94:30/10 -93:30/12
        -92:30/14 -91:30/15 -90:30/17 -89:31/19 -88:32/20 -87:33/22 -86:34/24 -85:35/25 -84:36/27
        -83:37/29 -82:38/30 -81:39/32 -80:40/34 -79:41/35 -78:42/37 -77:43/39 -76:44/40 -75:45/42
        -74:46/44 -73:47/45 -72:48/47 -71:49/49 -70:50/50 -69:51/52 -68:52/54 -67:53/55 -66:54/57
        -65:55/59 -64:56/60 -63:57/62 -62:58/64 -61:59/65 -60:60/67 -59:61/69 -58:62/70 -57:63/72
        -56:63/74 -55:65/75 -54:66/77 -53:67/79 -52:68/80 -51:69/82 -50:70/84 -49:71/85 -48:72/87
        -47:73/89 -46:74/90 -45:75/92 -44:76/94 -43:77/95 -42:78/97 -41:79/99 -40:80/100 -39:81/100
        -38:82/100 -37:83/100 -36:84/100 -35:85/100 -34:86/100 -33:87/100 -32:88/100 -31:89/100
        -30:90/100 -29:91/100 -28:92/100 -27:93/100 -26:94/100 -25:95/100 -24:96/100 -23:97/100
        -22:98/100 -21:99/100 -20:100/100 -19:100/100 -18:100/100 -17:100/100 -16:100/100
        -15:100/100 -14:100/100 -13:100/100 -12:100/100 -11:100/100 -10:100/100 -9:100/100
        -8:100/100 -7:100/100 -6:100/100 -5:100/100 -4:100/100 -3:100/100 -2:100/100 -1:100/100
        0:100/0
        """

    static func rows() -> [(dbm: Int, connected: Int, scan: Int)] {
        networkManagerTable.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { entry in
            let parts = entry.split(whereSeparator: { $0 == ":" || $0 == "/" }).compactMap { Int($0) }
            return parts.count == 3 ? (parts[0], parts[1], parts[2]) : nil
        }
    }

    @Test func theConnectedScaleIsNetworkManagersToTheLastFigure() {
        let rows = Self.rows()
        #expect(rows.count == 129)
        for row in rows {
            #expect(WiFiSignalScale.strengthPercent(dbm: row.dbm) == row.connected, "\(row.dbm) dBm")
        }
        #expect(WiFiSignalScale.strengthPercent(dbm: -56) == 63)
        #expect(WiFiSignalScale.strengthPercent(dbm: Int.min) == 30)
        #expect(WiFiSignalScale.strengthPercent(dbm: Int.max) == 100)
    }

    /// For signals (below 0 dBm); NetworkManager reads 0 and above as a percentage already.
    @Test func theScanScaleIsNetworkManagersToTheLastFigure() {
        for row in Self.rows() where row.dbm < 0 {
            #expect(WiFiSignalScale.scanStrengthPercent(dbm: row.dbm) == row.scan, "\(row.dbm) dBm")
        }
        #expect(WiFiSignalScale.scanStrengthPercent(dbm: Int.min) == 0)
    }

    static let hostileSignalsCases: [(Double?, Int?)] = [
        // What a daemon or the kernel may send, and the dBm taken from it.
        (-56, -56), (-55.9, -55), (-1, -1), (-0.4, nil), (0, nil), (0.5, nil), (3, nil), (127, nil),
        (-126, -126), (-126.9, -126), (-127, nil), (-128, nil), (-1e300, nil), (1e300, nil),
        (.nan, nil), (-.nan, nil), (.infinity, nil), (-.infinity, nil), (.greatestFiniteMagnitude, nil),
        (-.greatestFiniteMagnitude, nil), (.leastNonzeroMagnitude, nil), (nil, nil),
    ]

    @Test(arguments: hostileSignalsCases)
    func hostileSignals(value: Double?, dbm: Int?) {
        #expect(WiFiSignalScale.dbm(value) == dbm)
    }

    static let barsCases: [(Int, Int)] = [
        // Android's config_wifiRssiLevelThresholds: -88/-77/-66/-55, a threshold reached is a bar.
        (-126, 0), (-89, 0), (-88, 1), (-78, 1), (-77, 2), (-67, 2), (-66, 3), (-56, 3), (-55, 4), (-30, 4), (-1, 4),
    ]

    @Test(arguments: barsCases)
    func bars(dbm: Int, bars: Int) {
        for band in [WiFiBand?.none] + WiFiBand.allCases.map(Optional.some) {
            #expect(WiFiSignalScale.bars(dbm: dbm, band: band) == bars, "\(dbm) dBm on \(String(describing: band))")
        }
    }

    @Test func iwdsAgentLevelsAreTheBarEdges() {
        #expect(WiFiSignalScale.iwdAgentLevels == [-55, -66, -77, -88])
        // iwd's level for a signal is how many of the (descending) thresholds it is below; the
        // bars from that level are the bars from the signal, at every signal.
        for dbm in WiFiSignalScale.validDbm {
            let level = WiFiSignalScale.iwdAgentLevels.filter { dbm < Int($0) }.count
            #expect(WiFiSignalScale.bars(iwdAgentLevel: level) == WiFiSignalScale.bars(dbm: dbm, band: nil), "\(dbm) dBm")
        }
        #expect(WiFiSignalScale.bars(iwdAgentLevel: 0) == 4)
        #expect(WiFiSignalScale.bars(iwdAgentLevel: 4) == 0)
        for hostile in [-1, 5, 255, Int.max, Int.min] {
            #expect(WiFiSignalScale.bars(iwdAgentLevel: hostile) == nil)
        }
    }
}
