/// A JSON parser for varlink messages (RFC 8259), in one pass over the bytes: every byte is
/// looked at a bounded number of times, so a message costs time in proportion to its length
/// whatever its shape.
///
/// Stricter than JSON requires, because its input comes from any local user:
/// - containers nest at most `maxDepth` deep (`Varlink.maxNesting`; reachd's deepest message,
///   an event, nests 7: reply, parameters, event, status, interfaces, interface, addresses);
/// - an object may not name a key twice (parsers disagree on which one wins);
/// - strings must be valid UTF-8 and escapes complete (no lone surrogate);
/// - a number has at most `maxNumberLength` characters and must be finite.
///
/// `steps` counts the parser's elementary operations (a byte examined, a value made), so that
/// tests can check the work per byte of hostile input without timing it.
public struct JSONParser {
    /// Characters a number may have: far more than any Int or Double needs, few enough that
    /// converting one costs next to nothing.
    public static let maxNumberLength = 64

    /// Why the bytes are not a JSON value reachd accepts, and where (a byte offset).
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public enum Kind: Equatable, Sendable {
            case unexpectedEnd
            case unexpectedByte(UInt8)
            /// Containers nested deeper than the limit.
            case tooDeep(limit: Int)
            case duplicateKey(String)
            case badNumber
            case badEscape
            case invalidUTF8
            /// A raw control character (below 0x20) inside a string.
            case controlCharacter(UInt8)
            /// Something after the value.
            case trailingBytes
        }

        public let kind: Kind
        public let offset: Int

        public init(_ kind: Kind, offset: Int) {
            self.kind = kind; self.offset = offset
        }

        public var description: String {
            let what: String
            switch kind {
            case .unexpectedEnd: what = "unexpected end"
            case .unexpectedByte(let byte): what = "unexpected " + Self.name(byte)
            case .tooDeep(let limit): what = "nested deeper than \(limit) levels"
            case .duplicateKey(let key): what = "duplicate key \"\(TerminalText.escaped(String(key.prefix(64))))\""
            case .badNumber: what = "bad number"
            case .badEscape: what = "bad escape in string"
            case .invalidUTF8: what = "string is not valid UTF-8"
            case .controlCharacter(let byte): what = "unescaped control character " + Self.name(byte) + " in string"
            case .trailingBytes: what = "bytes after the value"
            }
            return "\(what) at byte \(offset)"
        }

        private static func name(_ byte: UInt8) -> String {
            (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var index = 0
    /// Elementary operations so far: bytes examined plus values made.
    public private(set) var steps = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes; self.maxDepth = maxDepth
    }

    /// Parses one JSON value that fills `bytes` (whitespace around it allowed).
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = Varlink.maxNesting) throws(Error) -> JSONValue {
        try parseCounting(bytes, maxDepth: maxDepth).value
    }

    /// `parse`, with the operations it took (for tests of its cost).
    public static func parseCounting(_ bytes: some Collection<UInt8>, maxDepth: Int = Varlink.maxNesting) throws(Error) -> (value: JSONValue, steps: Int) {
        let result: Result<(JSONValue, Int), Error>
        if let contiguous = bytes.withContiguousStorageIfAvailable({ run($0, maxDepth: maxDepth) }) {
            result = contiguous
        } else {
            result = Array(bytes).withUnsafeBufferPointer { run($0, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    private static func run(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<(JSONValue, Int), Error> {
        var parser = JSONParser(buffer, maxDepth: maxDepth)
        do throws(Error) {
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw Error(.trailingBytes, offset: parser.index) }
            return .success((value, parser.steps))
        } catch {
            return .failure(error)
        }
    }

    // MARK: grammar

    private mutating func value(depth: Int) throws(Error) -> JSONValue {
        steps += 1
        guard index < bytes.count else { throw Error(.unexpectedEnd, offset: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case let byte: throw Error(.unexpectedByte(byte), offset: index)
        }
    }

    private mutating func object(depth: Int) throws(Error) -> JSONValue {
        guard depth <= maxDepth else { throw Error(.tooDeep(limit: maxDepth), offset: index) }
        index += 1
        steps += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw Error(.unexpectedByte(bytes[index]), offset: index) }
            let keyOffset = index
            let key = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let member = try value(depth: depth)
            guard members.updateValue(member, forKey: key) == nil else {
                throw Error(.duplicateKey(key), offset: keyOffset)
            }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1; steps += 1; skipWhitespace()
            case UInt8(ascii: "}"): index += 1; steps += 1; return .object(members)
            case let byte: throw Error(.unexpectedByte(byte), offset: index)
            }
        }
    }

    private mutating func array(depth: Int) throws(Error) -> JSONValue {
        guard depth <= maxDepth else { throw Error(.tooDeep(limit: maxDepth), offset: index) }
        index += 1
        steps += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): index += 1; steps += 1; skipWhitespace()
            case UInt8(ascii: "]"): index += 1; steps += 1; return .array(elements)
            case let byte: throw Error(.unexpectedByte(byte), offset: index)
            }
        }
    }

    /// A string from its opening quote; on return `index` is past the closing one.
    private mutating func string() throws(Error) -> String {
        index += 1
        let start = index
        // The common case, no escape: the bytes between the quotes are the string.
        while index < bytes.count {
            steps += 1
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try utf8(UnsafeBufferPointer(rebasing: bytes[start..<index]), offset: start)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw Error(.controlCharacter(byte), offset: index) }
            index += 1
        }
        guard index < bytes.count else { throw Error(.unexpectedEnd, offset: index) }
        // Escapes: the string is built in a buffer, continuing from the first backslash.
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            steps += 1
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let text = try buffer.withUnsafeBufferPointer { (raw) throws(Error) -> String in try utf8(raw, offset: start) }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &buffer)
            case 0..<0x20:
                throw Error(.controlCharacter(byte), offset: index)
            default:
                buffer.append(byte)
                index += 1
            }
        }
        throw Error(.unexpectedEnd, offset: index)
    }

    /// One escape sequence from its backslash, appended as UTF-8.
    private mutating func escape(into buffer: inout [UInt8]) throws(Error) {
        let offset = index
        index += 1
        guard index < bytes.count else { throw Error(.unexpectedEnd, offset: index) }
        steps += 1
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(letter)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by the escape of a low one.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw Error(.badEscape, offset: offset)
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw Error(.badEscape, offset: offset) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Error(.badEscape, offset: offset)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Error(.badEscape, offset: offset) }
            buffer.append(contentsOf: unicode.utf8)
        default:
            throw Error(.badEscape, offset: offset)
        }
    }

    private mutating func hex4() throws(Error) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Error(.unexpectedEnd, offset: bytes.count) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            steps += 1
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Error(.badEscape, offset: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func utf8(_ raw: UnsafeBufferPointer<UInt8>, offset: Int) throws(Error) -> String {
        guard let text = String(validating: raw, as: UTF8.self) else { throw Error(.invalidUTF8, offset: offset) }
        return text
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an Int when it has neither fraction
    /// nor exponent and fits, else a (finite) Double.
    private mutating func number() throws(Error) -> JSONValue {
        let start = index
        var integral = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = try digits()
        // No leading zeros: "01" is not JSON.
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw Error(.badNumber, offset: start)
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard try digits() > 0 else { throw Error(.badNumber, offset: start) }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            integral = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard try digits() > 0 else { throw Error(.badNumber, offset: start) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        steps += text.utf8.count
        if integral, let int = Int(text) { return .int(int) }
        guard let double = Double(text), double.isFinite else { throw Error(.badNumber, offset: start) }
        return .double(double)
    }

    /// Skips decimal digits; how many. A number longer than `maxNumberLength` is refused here,
    /// before anything converts it.
    private mutating func digits() throws(Error) -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            steps += 1
            index += 1
            if index - start > Self.maxNumberLength { throw Error(.badNumber, offset: start) }
        }
        return index - start
    }

    // MARK: bytes

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                steps += 1
                index += 1
            default:
                return
            }
        }
    }

    private func peek() throws(Error) -> UInt8 {
        guard index < bytes.count else { throw Error(.unexpectedEnd, offset: index) }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8) throws(Error) {
        guard try peek() == byte else { throw Error(.unexpectedByte(bytes[index]), offset: index) }
        index += 1
        steps += 1
    }

    private mutating func literal(_ word: StaticString) throws(Error) {
        let start = index
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Error(.unexpectedEnd, offset: bytes.count) }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] {
            throw Error(.unexpectedByte(bytes[index + i]), offset: start + i)
        }
        index += count
        steps += count
    }
}
