extension LinkQuality {
    /// True when the two tell an app something different: `level` or `effectiveType` differ, or
    /// one is known and the other not. RTT, loss, samples, times, `stale` and the radio's figures
    /// change with every measurement; an app that adapts to the class must not hear of each.
    public func differsInClass(from other: LinkQuality) -> Bool {
        level != other.level || effectiveType != other.effectiveType
    }

    /// `differsInClass(from:)` for optional values: appearing or going is a difference, except
    /// for a guess from the link's technology (`source: default`), which comes and goes with
    /// its link and tells nothing measured.
    public static func differsInClass(_ a: LinkQuality?, _ b: LinkQuality?) -> Bool {
        guard let a, let b else {
            guard let known = a ?? b else { return false }
            return known.source != .default
        }
        return a.differsInClass(from: b)
    }
}
