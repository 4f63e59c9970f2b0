/// Shell-style name patterns as `fnmatch(3)` without flags understands them — `*`, `?`, `[abc]`,
/// `[a-z]`, `[!x]` (or `[^x]`), `\` escapes — written in Swift so that Core stays free of C and
/// the configuration's interface globs (`Kind.wl*=wifi`, `Metered=wwan*`) are tested without I/O.
public struct Glob: Hashable, Sendable, CustomStringConvertible {
    public let pattern: String
    private let characters: [Character]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.characters = Array(pattern)
    }

    public var description: String { pattern }

    /// True when the whole of `name` matches the pattern.
    public func matches(_ name: String) -> Bool {
        Self.match(characters[...], Array(name)[...])
    }

    /// True when any of `patterns` matches `name`.
    public static func matchesAny(_ patterns: [String], _ name: String) -> Bool {
        patterns.contains { Glob($0).matches(name) }
    }

    private static func match(_ pattern: ArraySlice<Character>, _ name: ArraySlice<Character>) -> Bool {
        var p = pattern.startIndex, n = name.startIndex
        // Backtracking point of the last `*`: where in the pattern after it, and which name position it absorbed up to.
        var star: (pattern: Int, name: Int)? = nil
        while n < name.endIndex {
            if p < pattern.endIndex {
                let c = pattern[p]
                if c == "*" {
                    star = (p + 1, n)
                    p += 1
                    continue
                }
                if c == "?" { p += 1; n += 1; continue }
                if c == "[", let result = bracket(pattern, from: p, for: name[n]) {
                    if result.matched { p = result.next; n += 1; continue }
                } else {
                    var literal = c, next = p + 1
                    if c == "\\", next < pattern.endIndex { literal = pattern[next]; next += 1 }
                    if literal == name[n] { p = next; n += 1; continue }
                }
            }
            // Mismatch: let the last `*` absorb one more character, or fail.
            guard let s = star else { return false }
            star = (s.pattern, s.name + 1)
            p = s.pattern
            n = s.name + 1
        }
        while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }

    /// Matches `character` against the bracket expression at `start`; nil when the bracket is not
    /// closed (then `[` is a literal, as fnmatch treats it).
    private static func bracket(_ pattern: ArraySlice<Character>, from start: Int, for character: Character) -> (matched: Bool, next: Int)? {
        var i = start + 1
        var negate = false
        if i < pattern.endIndex, pattern[i] == "!" || pattern[i] == "^" { negate = true; i += 1 }
        var matched = false
        var first = true
        while i < pattern.endIndex {
            let c = pattern[i]
            if c == "]" && !first { return (matched != negate, i + 1) }
            first = false
            if i + 2 < pattern.endIndex, pattern[i + 1] == "-", pattern[i + 2] != "]" {
                if c <= character && character <= pattern[i + 2] { matched = true }
                i += 3
            } else {
                if c == character { matched = true }
                i += 1
            }
        }
        return nil
    }
}
