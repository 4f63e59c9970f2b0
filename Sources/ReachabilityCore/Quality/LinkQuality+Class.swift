extension LinkQuality {
    /// True when the two tell an app something different: `level` or `effectiveType` differ, or
    /// one is known and the other not. RTT, loss, samples, times, `stale` and the radio's figures
    /// change with every measurement; an app that adapts to the class must not hear of each.
    public func differsInClass(from other: LinkQuality) -> Bool {
        level != other.level || effectiveType != other.effectiveType
    }

    /// `differsInClass(from:)` for optional values: only two known classes can differ. A
    /// quality comes and goes with its uplink (a link coming up, a path going away), which is
    /// that change's event; a class known where none was is no news of its own.
    public static func differsInClass(_ a: LinkQuality?, _ b: LinkQuality?) -> Bool {
        guard let a, let b else { return false }
        return a.differsInClass(from: b)
    }
}
