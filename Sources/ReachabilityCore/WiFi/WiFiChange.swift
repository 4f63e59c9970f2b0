/// What changed between two reports of one device's Wi-Fi connection, as a person would tell it:
/// the roam detector. A change of access point within one network is a roam (one event, no
/// reachability flap); a signal that moves without changing the bars is quiet.
public enum WiFiChange: Equatable, Hashable, Sendable {
    /// Nothing changed.
    case none
    /// Figures moved (signal, strength, rate, channel, owner) but not the bars: no event of its
    /// own; the figures ride along with the next one.
    case figures
    /// The bars changed, on the same access point.
    case bars(from: Int?, to: Int?)
    /// Same network (SSID), another access point (BSSID).
    case roamed(from: WiFiBSSID, to: WiFiBSSID)
    /// A network where there was none.
    case joined
    /// No network any more.
    case left
    /// Another network, or one that cannot be told to be the same (a hidden or unnamed network
    /// on another access point).
    case switched

    /// The change from `old` to `new` (nil: not connected).
    ///
    /// Two stations are on the same network when both SSIDs are known, not empty, and equal
    /// byte for byte; then two known, different BSSIDs are a roam. Without a usable SSID on
    /// either side, only the same BSSID (or an identical report) tells that nothing but figures
    /// changed.
    public static func between(_ old: WiFiStation?, _ new: WiFiStation?) -> WiFiChange {
        guard let old else { return new == nil ? .none : .joined }
        guard let new else { return .left }
        if old == new { return .none }
        switch (old.ssid, new.ssid) {
        case let (oldSSID?, newSSID?) where !oldSSID.isEmpty && !newSSID.isEmpty:
            guard oldSSID == newSSID else { return .switched }
            if let from = old.bssid, let to = new.bssid, from != to { return .roamed(from: from, to: to) }
            return onOneAccessPoint(old, new)
        default:
            return old.isSameAccessPoint(as: new) ? onOneAccessPoint(old, new) : .switched
        }
    }

    /// True for the changes that make no event of their own.
    public var isQuiet: Bool {
        switch self {
        case .none, .figures: true
        case .bars, .roamed, .joined, .left, .switched: false
        }
    }

    private static func onOneAccessPoint(_ old: WiFiStation, _ new: WiFiStation) -> WiFiChange {
        if old.bars != new.bars { return .bars(from: old.bars, to: new.bars) }
        return old == new ? .none : .figures
    }
}
