import Foundation
import Testing
@testable import ReachabilityCore

/// The daemon's replacements for Foundation's string operations give Foundation's text.
@Suite struct StringEssentialsTests {
    /// Ties in binary and decimal, values just off a tie, rounding that carries into the integer
    /// part, negative values that round to zero, huge and tiny magnitudes, subnormals.
    static let fixedSamples: [Double] = [
        0, -0.0, 0.05, 0.15, 0.25, 0.35, 0.45, 0.95, 0.96, 1.05, 2.5, 9.95, 9.96, 99.95, 18.249999, 18.25,
        0.125, 0.375, 1e-300, -1e-300, Double(bitPattern: 1), 0.0049, 0.0051, -0.00049, -0.04, -0.05, -0.06, 123_456.789, 4_503_599_627_370_495.5,
        9_007_199_254_740_994, 1e22, 1.7976931348623157e308, .infinity, -.infinity, 0.1 + 0.2, 1 / 3,
        Double.leastNormalMagnitude, Double.ulpOfOne, 999.999_999, 0.000_5, 0.001_5,
    ]

    @Test(arguments: fixedSamples)
    func fixedNotationMatchesPrintf(_ value: Double) {
        for digits in 0...4 {
            #expect(String(fixed: value, fractionDigits: digits) == String(format: "%.\(digits)f", value),
                    "\(value) with \(digits) digits")
        }
    }

    @Test func fixedNotationMatchesPrintfOnRandomValues() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4_000 {
            let value: Double
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: value = Double.random(in: -1000...1000, using: &generator)
            case 1: value = Double(Int.random(in: -100_000...100_000, using: &generator)) / 1000 + 0.000_5
            default: value = Double(bitPattern: UInt64.random(in: .min ... .max, using: &generator))
            }
            let digits = Int.random(in: 0...3, using: &generator)
            #expect(String(fixed: value, fractionDigits: digits) == String(format: "%.\(digits)f", value),
                    "\(value.bitPattern) with \(digits) digits")
        }
    }

    @Test func nanIsWrittenAsPrintfWritesIt() {
        #expect(String(fixed: .nan, fractionDigits: 1) == String(format: "%.1f", Double.nan))
    }

    @Test(arguments: ["", " ", "\t a b \t", "\u{00A0}x\u{2003}", " \n x \n ", "\r\nx\r\n", "x", "  é  ", "\u{3000}全角\u{3000}"])
    func trimmingWhitespaceMatchesFoundation(_ text: String) {
        #expect(text.trimmingWhitespace == text.trimmingCharacters(in: .whitespaces))
        #expect(text[...].trimmingWhitespace == text.trimmingCharacters(in: .whitespaces))
    }

    @Test func caseInsensitiveSearchFindsWhatFoundationFinds() {
        let html = #"<html><HEAD><Meta HTTP-EQUIV="Refresh" content="0; URL=http://portal/">é<meta"#
        for needle in ["<meta", "http-equiv", "refresh", "url=", "<html", "absent", "é<meta"] {
            let ours = html.firstRange(ofCaseInsensitive: needle)
            let foundation = html.range(of: needle, options: .caseInsensitive)
            #expect(ours == foundation, "\(needle)")
        }
        let tail = html[html.index(html.startIndex, offsetBy: 10)...]
        #expect(tail.firstRange(ofCaseInsensitive: "<meta") == tail.range(of: "<meta", options: .caseInsensitive))
        #expect("".firstRange(ofCaseInsensitive: "x") == nil)
        #expect("ab".firstRange(ofCaseInsensitive: "abc") == nil)
    }

    @Test(arguments: [("", ""), ("one line", "one line"), ("a\nb\n", "a b "), ("\n\n", "  "),
                      ("cr lf\r\nend", "cr lf\r end")])
    func lineFeedsBecomeSpaces(_ text: String, _ expected: String) {
        #expect(text.replacingLineFeedsWithSpaces.unicodeScalars.elementsEqual(expected.unicodeScalars))
    }
}
