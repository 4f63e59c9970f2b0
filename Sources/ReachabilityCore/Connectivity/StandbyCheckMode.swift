/// `[Connectivity] CheckStandby=`: which standby uplinks the standby check checks.
public enum StandbyCheckMode: String, Equatable, Sendable, CaseIterable {
    /// Every standby uplink, cellular and metered ones too.
    case yes
    /// None: only the primary path is checked.
    case no
    /// Those that are not expensive (not metered, not cellular): the default, since a check
    /// every few minutes over a metered modem costs its owner money.
    case unmetered

    /// Whether an uplink that is `expensive` or not is checked.
    public func checks(expensive: Bool) -> Bool {
        switch self {
        case .yes: return true
        case .no: return false
        case .unmetered: return !expensive
        }
    }
}
