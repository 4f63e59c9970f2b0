/// ModemManager's `MMModemAccessTechnology` bit mask, and its map to a
/// cellular generation (2G/3G/4G/5G; docs/protocol.md).
public struct ModemAccessTechnology: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let pots = Self(rawValue: 1 << 0)
    public static let gsm = Self(rawValue: 1 << 1)
    public static let gsmCompact = Self(rawValue: 1 << 2)
    public static let gprs = Self(rawValue: 1 << 3)
    public static let edge = Self(rawValue: 1 << 4)
    public static let umts = Self(rawValue: 1 << 5)
    public static let hsdpa = Self(rawValue: 1 << 6)
    public static let hsupa = Self(rawValue: 1 << 7)
    public static let hspa = Self(rawValue: 1 << 8)
    public static let hspaPlus = Self(rawValue: 1 << 9)
    public static let oneXRTT = Self(rawValue: 1 << 10)
    public static let evdo0 = Self(rawValue: 1 << 11)
    public static let evdoA = Self(rawValue: 1 << 12)
    public static let evdoB = Self(rawValue: 1 << 13)
    public static let lte = Self(rawValue: 1 << 14)
    public static let fiveGNR = Self(rawValue: 1 << 15)
    public static let lteCatM = Self(rawValue: 1 << 16)
    public static let lteNBIoT = Self(rawValue: 1 << 17)

    /// Cellular generations, oldest first.
    public enum Generation: String, Sendable, CaseIterable, Comparable {
        case g2 = "2G", g3 = "3G", g4 = "4G", g5 = "5G"

        var rank: Int {
            switch self {
            case .g2: return 2
            case .g3: return 3
            case .g4: return 4
            case .g5: return 5
            }
        }

        public static func < (a: Generation, b: Generation) -> Bool { a.rank < b.rank }

        /// The status value for a modem of this generation.
        public var networkStatus: NetworkStatus {
            switch self {
            case .g2: return .wwan2G
            case .g3: return .wwan3G
            case .g4: return .wwan4G
            case .g5: return .wwan5G
            }
        }
    }

    /// Each known bit with ModemManager's name for it (as `mmcli` prints it) and its generation,
    /// newest last within a generation. POTS (analog) has no generation.
    public static let table: [(bit: ModemAccessTechnology, name: String, generation: Generation?)] = [
        (.pots, "pots", nil),
        (.gsm, "gsm", .g2), (.gsmCompact, "gsm-compact", .g2), (.oneXRTT, "1xrtt", .g2),
        (.gprs, "gprs", .g2), (.edge, "edge", .g2),
        (.umts, "umts", .g3), (.evdo0, "evdo0", .g3), (.evdoA, "evdoa", .g3), (.evdoB, "evdob", .g3),
        (.hsdpa, "hsdpa", .g3), (.hsupa, "hsupa", .g3), (.hspa, "hspa", .g3), (.hspaPlus, "hspa-plus", .g3),
        (.lteNBIoT, "lte-nb-iot", .g4), (.lteCatM, "lte-cat-m", .g4), (.lte, "lte", .g4),
        (.fiveGNR, "5gnr", .g5),
    ]

    /// The newest technology in the mask: highest generation, then latest in `table`.
    public var newest: (name: String, generation: Generation?)? {
        var best: (name: String, generation: Generation?)?
        for entry in Self.table where contains(entry.bit) {
            guard let current = best else { best = (entry.name, entry.generation); continue }
            switch (current.generation, entry.generation) {
            case (nil, _): best = (entry.name, entry.generation)
            case (.some, nil): break
            case let (.some(a), .some(b)): if b >= a { best = (entry.name, entry.generation) }
            }
        }
        return best
    }
}
