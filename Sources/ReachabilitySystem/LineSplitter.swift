/// Cuts a byte stream (a child's stdout) into lines as the bytes arrive: text up to each
/// newline, without it; with a `maximum`, a longer run is handed over in pieces of that length.
struct LineSplitter {
    /// The longest line handed over, in bytes; nil: no limit.
    let maximum: Int?
    private var pending: [UInt8] = []
    /// Where the search for the next newline goes on: the bytes before it have none.
    private var searched = 0

    init(maximum: Int? = nil) {
        self.maximum = maximum
    }

    /// True while bytes after the last newline wait for theirs.
    var hasPartialLine: Bool { !pending.isEmpty }

    /// Takes `bytes`; returns the lines they complete.
    mutating func append(_ bytes: some Collection<UInt8>) -> [String] {
        pending.append(contentsOf: bytes)
        var lines: [String] = []
        var start = 0
        while true {
            if let newline = pending[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")),
               maximum.map({ newline - start <= $0 }) ?? true {
                lines.append(String(decoding: pending[start..<newline], as: UTF8.self))
                start = newline + 1
                searched = 0
            } else if let maximum, pending.count - start >= maximum {
                lines.append(String(decoding: pending[start..<(start + maximum)], as: UTF8.self))
                start += maximum
                searched = 0
            } else {
                searched = pending.count - start
                break
            }
        }
        pending.removeFirst(start)
        return lines
    }

    /// At the end of the stream: the last line when it had no newline.
    mutating func finish() -> String? {
        defer { pending = []; searched = 0 }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }
}
