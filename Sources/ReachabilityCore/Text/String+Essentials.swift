// The few string operations the daemon needs that `FoundationEssentials` lacks (they live in
// Foundation's NSString layer, which brings ICU). Each one produces the text its Foundation
// counterpart did for the inputs reachd meets; tests compare them with `String(format:)` and
// `trimmingCharacters(in:)`.

extension String {
    /// `value` in fixed notation with `fractionDigits` digits after the point, as C's `%.Nf`
    /// (and `String(format: "%.1f", value)`) writes it: exact binary value, ties rounded to
    /// even, a minus sign kept on a negative value that rounds to zero, `nan`/`inf`/`-inf`.
    package init(fixed value: Double, fractionDigits: Int) {
        self = FixedNotation.format(value, fractionDigits: Swift.max(0, fractionDigits))
    }
}

extension StringProtocol {
    /// Without leading and trailing tabs and space separators (Unicode category Zs): what
    /// `trimmingCharacters(in: .whitespaces)` removes. Line ends stay.
    package var trimmingWhitespace: String {
        let scalars = unicodeScalars
        let isWhitespace: (Unicode.Scalar) -> Bool = { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }),
              let last = scalars.lastIndex(where: { !isWhitespace($0) }) else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first...last])
        return String(trimmed)
    }

    /// The first range of `needle` (ASCII) in `self`, ASCII letters compared without case.
    package func firstRange(ofCaseInsensitive needle: String) -> Range<Index>? {
        let wanted = Array(needle.utf8).map(Self.asciiLowercased)
        guard !wanted.isEmpty else { return nil }
        let bytes = utf8
        var start = bytes.startIndex
        while start != bytes.endIndex {
            var cursor = start
            var matched = 0
            while matched < wanted.count, cursor != bytes.endIndex, Self.asciiLowercased(bytes[cursor]) == wanted[matched] {
                matched += 1
                bytes.formIndex(after: &cursor)
            }
            if matched == wanted.count { return start..<cursor }
            bytes.formIndex(after: &start)
        }
        return nil
    }

    /// `self` with every line feed replaced by a space (scalar by scalar, so a CR LF pair
    /// becomes CR and a space).
    package var replacingLineFeedsWithSpaces: String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: unicodeScalars.lazy.map { $0 == "\n" ? " " : $0 })
        return String(scalars)
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

/// Exact decimal expansion of a `Double`, rounded as glibc's printf rounds (to nearest, ties to
/// even, in the default rounding mode).
enum FixedNotation {
    static func format(_ value: Double, fractionDigits: Int) -> String {
        if value.isNaN { return value.sign == .minus ? "-nan" : "nan" }
        if value.isInfinite { return value.sign == .minus ? "-inf" : "inf" }
        let sign = value.sign == .minus ? "-" : ""
        let magnitude = value.magnitude
        // Far below half a unit of the last digit (a fifth of one, with room for the inexact
        // power of ten): zero, without expanding hundreds of digits.
        var tenth = 1.0
        for _ in 0...fractionDigits { tenth /= 10 }
        if magnitude < tenth {
            return sign + (fractionDigits == 0 ? "0" : "0." + String(repeating: "0", count: fractionDigits))
        }
        // magnitude = significand · 2^exponent, both integers.
        var significand = magnitude.significandBitPattern
        let bias = (1 << (Double.exponentBitCount - 1)) - 1
        var exponent = Int(magnitude.exponentBitPattern)
        if exponent == 0 {
            exponent = 1 - bias - Double.significandBitCount
        } else {
            significand |= 1 << UInt64(Double.significandBitCount)
            exponent -= bias + Double.significandBitCount
        }
        // Decimal digits, least significant first, and how many of them are after the point.
        var digits = decimalDigits(of: significand)
        var scale = 0
        if exponent >= 0 {
            for _ in 0..<exponent { multiply(&digits, by: 2) }
        } else {
            // x / 2^k = x · 5^k / 10^k.
            for _ in 0..<(-exponent) { multiply(&digits, by: 5) }
            scale = -exponent
        }
        if scale > fractionDigits {
            let dropped = scale - fractionDigits
            let tail = Array(digits.prefix(dropped))
            digits.removeFirst(min(dropped, digits.count))
            if digits.isEmpty { digits = [0] }
            // Round to nearest: compare the dropped tail with one half (5 followed by zeros).
            let top = tail.count == dropped ? tail[dropped - 1] : 0
            let restIsZero = tail.dropLast().allSatisfy { $0 == 0 }
            let roundUp = top > 5 || (top == 5 && !restIsZero) || (top == 5 && restIsZero && digits[0] % 2 == 1)
            if roundUp { add(&digits, one: 0) }
            scale = fractionDigits
        }
        while scale < fractionDigits {
            digits.insert(0, at: 0)
            scale += 1
        }
        while digits.count <= scale { digits.append(0) }
        while digits.count > scale + 1, digits.last == 0 { digits.removeLast() }
        var text = sign
        text.reserveCapacity(digits.count + 2)
        for index in stride(from: digits.count - 1, through: 0, by: -1) {
            if index == scale - 1 { text.append(".") }
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") + digits[index])))
        }
        return text
    }

    private static func decimalDigits(of value: UInt64) -> [UInt8] {
        var value = value
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(value % 10))
            value /= 10
        } while value > 0
        return digits
    }

    private static func multiply(_ digits: inout [UInt8], by factor: UInt8) {
        var carry: UInt8 = 0
        for index in digits.indices {
            let product = digits[index] * factor + carry
            digits[index] = product % 10
            carry = product / 10
        }
        if carry > 0 { digits.append(carry) }
    }

    private static func add(_ digits: inout [UInt8], one position: Int) {
        var index = position
        while index < digits.count {
            if digits[index] < 9 {
                digits[index] += 1
                return
            }
            digits[index] = 0
            index += 1
        }
        digits.append(1)
    }
}
