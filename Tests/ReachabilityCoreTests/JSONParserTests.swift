import Foundation
import Testing
@testable import ReachabilityCore

@Suite struct JSONParserTests {
    @Test(arguments: [
        (#"{}"#, JSONValue.object([:])),
        (#" [ ] "#, .array([])),
        (#"{"a":[1,-2,0,1.5,-0.25e2,1E3,true,false,null,"s"]}"#,
         .object(["a": .array([.int(1), .int(-2), .int(0), .double(1.5), .double(-25), .double(1000), .bool(true), .bool(false), .null, .string("s")])])),
        (#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00x""#, .string("\"\\/\u{8}\u{C}\n\r\té😀x")),
        (#""é€""#, .string("é€")),
        (#""\u0000""#, .string("\u{0}")),
        ("9223372036854775807", .int(Int.max)),
        ("9223372036854775808", .double(9223372036854775808)),
        ("\t{\"k\" :\n{ \"n\" : [ ] } }\r\n", .object(["k": .object(["n": .array([])])])),
    ])
    func parses(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
    }

    @Test(arguments: [
        ("", JSONParser.Error.Kind.unexpectedEnd),
        ("{", .unexpectedEnd),
        (#"{"a":1,}"#, .unexpectedByte(UInt8(ascii: "}"))),
        (#"[1 2]"#, .unexpectedByte(UInt8(ascii: "2"))),
        (#"{"a":1} x"#, .trailingBytes),
        (#"{a:1}"#, .unexpectedByte(UInt8(ascii: "a"))),
        ("01", .badNumber),
        ("-", .badNumber),
        ("1.", .badNumber),
        ("1e", .badNumber),
        ("1e400", .badNumber),
        (String(repeating: "1", count: 65), .badNumber),
        (#""\x""#, .badEscape),
        (#""\ud800""#, .badEscape),
        (#""\udc00""#, .badEscape),
        (#""\u12"#, .unexpectedEnd),
        ("\"a\u{1}\"", .controlCharacter(1)),
        (#""abc"#, .unexpectedEnd),
        ("tru", .unexpectedEnd),
        ("nul!", .unexpectedByte(UInt8(ascii: "!"))),
        (#"{"a":1,"a":2}"#, .duplicateKey("a")),
        (#"{"p":{"x":[],"y":0,"x":1}}"#, .duplicateKey("x")),
        // The same key spelled with an escape is the same key.
        (#"{"a":1,"\u0061":2}"#, .duplicateKey("a")),
    ])
    func refuses(_ text: String, _ kind: JSONParser.Error.Kind) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(Array(text.utf8)) }
        do {
            _ = try JSONParser.parse(Array(text.utf8))
        } catch {
            #expect(error.kind == kind, "\(text): \(error)")
        }
    }

    @Test func refusesInvalidUTF8InStrings() {
        let bytes: [UInt8] = [UInt8(ascii: "\"")] + [0xC3, 0x28] + [UInt8(ascii: "\"")]
        do {
            _ = try JSONParser.parse(bytes)
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.kind == .invalidUTF8)
        }
    }

    @Test func nestingUpToTheLimitAndNotBeyond() throws {
        let limit = Varlink.maxNesting
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try JSONParser.parse(Array(deepest.utf8)) != .null)
        let tooDeep = String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        do {
            _ = try JSONParser.parse(Array(tooDeep.utf8))
            Issue.record("accepted \(limit + 1) levels")
        } catch {
            #expect(error.kind == .tooDeep(limit: limit))
            #expect(error.description.contains("nested deeper than \(limit) levels"))
        }
    }

    /// reachd's own deepest message, an event with interfaces and addresses, fits the limit.
    @Test func anEventFitsTheLimit() throws {
        let status = Status.initial(since: Date(timeIntervalSince1970: 1_800_000_000))
        let event = ReachabilityEvent(sequence: 1, timestamp: Date(timeIntervalSince1970: 1_800_000_000), event: .initial,
                                      reason: Reason(code: .initial), previous: status, current: status)
        let reply = VarlinkCodec.encodeReply(parametersJSON: try VarlinkCodec.encodeParameters(key: "event", value: event), continues: true)
        #expect(try VarlinkCodec.decodeReply(reply).decode(ReachabilityEvent.self, key: "event") == event)
    }

    /// What a hostile local user can send in one message (up to 64 KiB), each kind at a small
    /// and at a large size: the parser's operations per byte stay under a constant, and
    /// doubling the input at most doubles them. Counted, not timed.
    @Test(arguments: AdversarialJSON.allCases)
    func workPerByteIsBounded(_ kind: AdversarialJSON) throws {
        var perByte: [Double] = []
        for size in [1024, 8 * 1024, 60 * 1024] {
            let bytes = kind.bytes(size: size)
            let steps: Int
            do {
                steps = try JSONParser.parseCounting(bytes).steps
            } catch {
                // Refused: its cost is what it took to get there, at most the bytes it saw.
                steps = error.offset + 1
            }
            perByte.append(Double(steps) / Double(bytes.count))
            #expect(steps <= 4 * bytes.count + 16, "\(kind) at \(bytes.count) bytes: \(steps) steps")
        }
        // Linear: the cost per byte does not grow with the size.
        #expect(perByte[2] <= perByte[0] * 1.5 + 0.1, "\(kind): \(perByte) steps per byte")
    }

    /// The attack that stalled reachd: messages nested hundreds deep are refused at the limit,
    /// whatever their depth, after a number of operations that does not grow with it.
    @Test(arguments: [100, 400, 500, 5000])
    func deepNestingIsRefusedAtTheLimit(_ depth: Int) {
        let text = #"{"method":"io.reachd.Reachability.GetStatus","parameters":{"x":"# + String(repeating: "[", count: depth)
            + String(repeating: "]", count: depth) + "}}"
        do {
            _ = try JSONParser.parse(Array(text.utf8))
            Issue.record("accepted depth \(depth)")
        } catch {
            #expect(error.kind == .tooDeep(limit: Varlink.maxNesting))
            #expect(error.offset < 100)
        }
        #expect(throws: VarlinkProtocolError.self) { try VarlinkCodec.decodeCall(Array(text.utf8)) }
    }

    @Test func duplicateKeysInACallAreRefused() {
        let text = #"{"method":"io.reachd.Reachability.Check","parameters":{"host":"a.test","host":"b.test"}}"#
        do {
            _ = try VarlinkCodec.decodeCall(Array(text.utf8))
            Issue.record("accepted a duplicate key")
        } catch let error as VarlinkProtocolError {
            #expect(error.description.contains(#"duplicate key "host""#), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: VarlinkProtocolError.self) {
            try VarlinkCodec.decodeCall(Array(#"{"method":"a.B","method":"a.C"}"#.utf8))
        }
    }
}

/// Shapes of JSON that make naive parsers slow, at a chosen size.
enum AdversarialJSON: String, CaseIterable, CustomStringConvertible, Sendable {
    /// `[[[[…` to the size: refused at the depth limit.
    case deepArrays
    /// `{"a":{"a":…` to the size.
    case deepObjects
    /// Containers nested to the limit, over and over.
    case nestedToTheLimit
    /// One string of escapes.
    case escapes
    /// One string of `\u` surrogate pairs.
    case surrogatePairs
    /// One long plain string.
    case longString
    /// An object with thousands of keys.
    case manyKeys
    /// Keys that differ only in their last character.
    case longSimilarKeys
    /// An array of numbers as long as allowed.
    case longNumbers
    /// Whitespace between every token.
    case whitespace
    /// An array of empty objects and arrays.
    case manySmallContainers

    var description: String { rawValue }

    func bytes(size: Int) -> [UInt8] {
        var text = ""
        func fill(_ open: String, _ unit: (Int) -> String, _ close: String) -> String {
            var body = "", i = 0
            while open.utf8.count + body.utf8.count + close.utf8.count < size {
                if i > 0 { body += "," }
                body += unit(i); i += 1
            }
            return open + body + close
        }
        switch self {
        case .deepArrays:
            text = String(repeating: "[", count: size / 2) + String(repeating: "]", count: size / 2)
        case .deepObjects:
            let levels = size / 6
            text = String(repeating: #"{"a":"#, count: levels) + "1" + String(repeating: "}", count: levels)
        case .nestedToTheLimit:
            let depth = Varlink.maxNesting - 1
            let unit = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
            text = fill("[", { _ in unit }, "]")
        case .escapes:
            text = "\"" + String(repeating: #"\\\"\n"#, count: size / 6) + "\""
        case .surrogatePairs:
            text = "\"" + String(repeating: #"\ud83d\ude00"#, count: size / 12) + "\""
        case .longString:
            text = "\"" + String(repeating: "é", count: size / 2) + "\""
        case .manyKeys:
            text = fill("{", { #""k\#($0)":\#($0)"# }, "}")
        case .longSimilarKeys:
            let stem = String(repeating: "x", count: 200)
            text = fill("{", { #""\#(stem)\#($0)":null"# }, "}")
        case .longNumbers:
            text = fill("[", { _ in "-" + String(repeating: "9", count: 30) + "." + String(repeating: "9", count: 20) + "e-10" }, "]")
        case .whitespace:
            text = fill("[", { _ in " \t\n\r 1 \r\n\t " }, "]")
        case .manySmallContainers:
            text = fill("[", { $0 % 2 == 0 ? "{}" : "[]" }, "]")
        }
        return Array(text.utf8)
    }
}
