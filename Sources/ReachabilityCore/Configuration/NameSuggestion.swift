/// "Did you mean …": the known name closest to a misspelt one, for configuration errors.
public enum NameSuggestion {
    /// The name in `known` that `name` most likely meant: one that differs only in case, or
    /// one within a few typing slips (the edit distance, case ignored: at most 1 for names of up
    /// to 4 characters, 2 up to 8, 3 beyond); nil when none is that close. Names ending in `.`
    /// are prefixes (`Kind.`): a name that starts with one matches it. The first of equally
    /// close names wins.
    public static func closest(to name: String, among known: [String]) -> String? {
        let wanted = name.lowercased()
        if let same = known.first(where: { $0.lowercased() == wanted }) { return same }
        if let prefix = known.first(where: { $0.hasSuffix(".") && wanted.hasPrefix($0.lowercased()) }) { return prefix }
        let limit = wanted.count <= 4 ? 1 : wanted.count <= 8 ? 2 : 3
        var best: (name: String, distance: Int)?
        for candidate in known {
            // A prefix key is compared with as much of the name as it covers.
            let compared = candidate.hasSuffix(".") ? String(wanted.prefix(candidate.count)) : wanted
            let distance = editDistance(compared, candidate.lowercased())
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// two neighbouring characters each count 1 (`Intervall`→`Interval` 1, `Timeuot`→`Timeout` 1).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
