/// A network's name as the air carries it: up to 32 bytes, not necessarily UTF-8, not
/// necessarily printable. The bytes are kept as they came (they are what identifies the network);
/// `display` is the form to show a person.
public struct WiFiSSID: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The most bytes an SSID element holds (IEEE 802.11); more is cut, as NetworkManager does.
    public static let maximumLength = 32

    /// The name's bytes, at most `maximumLength`.
    public let bytes: [UInt8]
    /// The name for eyes: valid UTF-8 as text, with control characters and bidirectional
    /// overrides shown as escapes (`TerminalText.escaped`: `\x1b`, `\u{202e}`), and each byte
    /// that is not part of valid UTF-8 shown as `\xNN`. A name cannot move a terminal's cursor or
    /// pass for another by reordering what follows it.
    public let display: String

    public init(bytes: some Collection<UInt8>) {
        self.bytes = Array(bytes.prefix(Self.maximumLength))
        display = Self.displayText(self.bytes)
    }

    /// An SSID a daemon gave as text (iwd's `Network.Name`).
    public init(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    /// True for the empty name a hidden network beacons.
    public var isEmpty: Bool { bytes.isEmpty }

    public var description: String { display }

    /// `bytes` shown: valid UTF-8 runs through `TerminalText.escaped`, other bytes as `\xNN`.
    static func displayText(_ bytes: [UInt8]) -> String {
        var result = ""
        var runStart = 0
        var offset = 0
        func flush(upTo end: Int) {
            if runStart < end { result += TerminalText.escaped(String(decoding: bytes[runStart..<end], as: UTF8.self)) }
        }
        while offset < bytes.count {
            if let length = validSequenceLength(bytes, at: offset) {
                offset += length
            } else {
                flush(upTo: offset)
                let hex = String(bytes[offset], radix: 16)
                result += "\\x" + (hex.count == 1 ? "0" + hex : hex)
                offset += 1
                runStart = offset
            }
        }
        flush(upTo: offset)
        return result
    }

    /// The length of the well-formed UTF-8 sequence starting at `offset` (RFC 3629's table: no
    /// overlong forms, no surrogates, nothing past U+10FFFF), or nil when none starts there.
    static func validSequenceLength(_ bytes: [UInt8], at offset: Int) -> Int? {
        let lead = bytes[offset]
        func continuation(_ index: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            offset + index < bytes.count && range.contains(bytes[offset + index])
        }
        switch lead {
        case 0x00...0x7F:
            return 1
        case 0xC2...0xDF:
            return continuation(1) ? 2 : nil
        case 0xE0:
            return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : nil
        case 0xED:
            return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : nil
        case 0xF0:
            return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF4:
            return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : nil
        default:
            return nil
        }
    }
}
