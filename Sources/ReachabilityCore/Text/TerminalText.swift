/// Text from outside (a captive portal's redirect, an HTTP error, a host's or interface's name)
/// made safe for a terminal: control characters are shown, not obeyed. A server on the path
/// could otherwise put ESC or BEL sequences into what `reachctl` prints and move the cursor,
/// retitle the window or worse.
public enum TerminalText {
    /// `text` with every C0 control (tabs and newlines too), DEL, C1 control and bidirectional
    /// override written as a visible escape: `\x1b`, `\x7f`, `\u{9b}`, `\u{202e}`; a backslash
    /// before such an escape stays as it is (the result is for eyes, not for parsing back).
    public static func escaped(_ text: String) -> String {
        // Printable ASCII (every log line reachd writes itself) needs nothing: told from the
        // bytes, without decoding a scalar.
        let printable = text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        if printable == true { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += scalar.value < 0x80 ? "\\x" + hex(scalar.value, digits: 2) : "\\u{" + hex(scalar.value, digits: 1) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// True for what a terminal may act on rather than show.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates reorder what follows them.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
