extension LinkQuality {
    /// True when the two tell an app something different: `level` or `effectiveType` differ, or
    /// one is known and the other not. RTT, loss, samples, times, `stale` and the radio's figures
    /// change with every measurement; an app that adapts to the class must not hear of each.
    public func differsInClass(from other: LinkQuality) -> Bool {
        level != other.level || effectiveType != other.effectiveType
    }

    /// `differsInClass(from:)` for optional values: only two known classes can differ. The
    /// estimator's question (did a class it knows move?), not an event's.
    public static func differsInClass(_ a: LinkQuality?, _ b: LinkQuality?) -> Bool {
        guard let a, let b else { return false }
        return a.differsInClass(from: b)
    }

    /// What an event counts: the class moved, or a class appeared or went (with its uplink, or
    /// with `[LinkQuality] Enabled=`). A subscriber to `linkQuality` hears the first class too.
    public static func differsAsShown(_ a: LinkQuality?, _ b: LinkQuality?) -> Bool {
        guard let a, let b else { return (a == nil) != (b == nil) }
        return a.differsInClass(from: b)
    }
}
