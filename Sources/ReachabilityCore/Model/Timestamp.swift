import FoundationEssentials

/// The one timestamp format on the wire: ISO 8601, UTC, milliseconds (`2026-11-29T13:00:00.120Z`).
public enum Timestamp {
    /// Formats `date` for the wire.
    public static func string(from date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Parses a wire timestamp; accepts one without fractional seconds as well.
    public static func date(from string: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(string) {
            return date
        }
        return try? Date.ISO8601FormatStyle().parse(string)
    }
}

extension KeyedDecodingContainer {
    func decodeTimestamp(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = Timestamp.date(from: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an ISO 8601 timestamp: \(text)")
        }
        return date
    }
}
