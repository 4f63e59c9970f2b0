/// What reachd takes from a DHCPv4 lease that systemd-networkd saved
/// (`/run/systemd/netif/leases/IFINDEX`): the vendor-specific option (43), where Android
/// hotspots put `ANDROID_METERED`.
///
/// networkd has written two forms to the same path:
/// - key=value lines, up to systemd 256 (`dhcp_lease_save()` in
///   src/libsystemd-network/sd-dhcp-lease.c): `VENDOR_SPECIFIC=` holds the option's bytes in hex
///   (`hexmem()`), after a comment `# This is private data. Do not parse.`;
/// - one JSON object, in newer networkd (the same function, with `sd_json`): the field
///   `Vendor_Specific` holds the bytes as a hex string (`SD_JSON_BUILD_PAIR_HEX`).
///
/// The file is networkd's private state and may be truncated or written by a future version
/// reachd does not know: anything it cannot read is an error that names what is wrong, and the
/// caller then guesses nothing from it.
public struct DHCPLease: Equatable, Sendable {
    /// The bytes of option 43 (vendor-specific information); nil when the lease has none.
    public var vendorSpecific: [UInt8]?

    public init(vendorSpecific: [UInt8]?) {
        self.vendorSpecific = vendorSpecific
    }

    /// The largest lease file read. networkd's are well under 4 KiB (a lease carries at most a
    /// few hundred bytes of options, doubled by hex); anything far bigger is not one.
    public static let maximumSize = 64 * 1024

    /// What Android's DHCP server sends in option 43 when the phone's uplink is metered.
    public static let androidMeteredHint: [UInt8] = Array("ANDROID_METERED".utf8)

    /// True when option 43 contains `ANDROID_METERED` anywhere, byte for byte: the test
    /// NetworkManager (`lease_parse_metered()`, nm-dhcp-nettools.c: `memmem`) and Android itself
    /// (`DhcpResults.hasMeteredHint()`: `contains`) make.
    public var isAndroidMetered: Bool {
        guard let bytes = vendorSpecific else { return false }
        return Self.contains(bytes, Self.androidMeteredHint)
    }

    /// Why a file is not a lease reachd can read.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var problem: String
        public init(_ problem: String) { self.problem = problem }
        public var description: String { problem }
    }

    /// Parses a lease file in either form: JSON when its first character that is not white
    /// space is `{`, key=value lines otherwise.
    public static func parse(_ bytes: some Collection<UInt8>) throws(ParseError) -> DHCPLease {
        guard bytes.count <= maximumSize else {
            throw ParseError("\(bytes.count) bytes, more than a lease file has (at most \(maximumSize))")
        }
        let bytes = Array(bytes)
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { throw ParseError("empty file") }
        return bytes[first] == UInt8(ascii: "{") ? try parseJSON(bytes) : try parseKeyValue(bytes)
    }

    /// The key=value form: one `KEY=VALUE` per line, `#` comments and empty lines skipped. A line
    /// without `=`, a missing final newline or bytes that are not text mean the file is not what
    /// networkd writes (cut short, or something else).
    static func parseKeyValue(_ bytes: [UInt8]) throws(ParseError) -> DHCPLease {
        guard bytes.last == UInt8(ascii: "\n") else { throw ParseError("truncated: the last line has no end") }
        var vendor: [UInt8]?
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            lineNumber += 1
            let trimmed = line.drop(while: isSpace)
            if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { continue }
            guard trimmed.allSatisfy({ $0 >= 0x20 || $0 == 0x09 }) else {
                throw ParseError("line \(lineNumber): control characters, not a lease file")
            }
            guard let equals = trimmed.firstIndex(of: UInt8(ascii: "=")) else {
                throw ParseError("line \(lineNumber): no '=' (expected KEY=VALUE)")
            }
            guard trimmed[trimmed.startIndex..<equals].elementsEqual("VENDOR_SPECIFIC".utf8) else { continue }
            var value = Array(trimmed[(equals + 1)...])
            while let last = value.last, isSpace(last) { value.removeLast() }
            // networkd writes hex bare; an env file may quote it.
            if value.count >= 2, value.first == value.last, value.first == UInt8(ascii: "\"") || value.first == UInt8(ascii: "'") {
                value = Array(value.dropFirst().dropLast())
            }
            do throws(ParseError) {
                vendor = try hex(value)
            } catch {
                throw ParseError("line \(lineNumber): VENDOR_SPECIFIC: \(error.problem)")
            }
        }
        return DHCPLease(vendorSpecific: vendor)
    }

    /// The JSON form: an object; `Vendor_Specific`, when present, a hex string.
    static func parseJSON(_ bytes: [UInt8]) throws(ParseError) -> DHCPLease {
        let value: JSONValue
        do {
            // networkd's deepest field (DNR resolvers' addresses) nests 4; a few levels more are harmless.
            value = try JSONParser.parse(bytes, maxDepth: 16)
        } catch {
            throw ParseError("not valid JSON: \(error)")
        }
        guard let object = value.objectValue else { throw ParseError("JSON that is not an object") }
        guard let field = object["Vendor_Specific"], !field.isNull else { return DHCPLease(vendorSpecific: nil) }
        guard let text = field.stringValue else { throw ParseError("Vendor_Specific is not a string") }
        do throws(ParseError) {
            return DHCPLease(vendorSpecific: try hex(Array(text.utf8)))
        } catch {
            throw ParseError("Vendor_Specific: \(error.problem)")
        }
    }

    /// Hex digits, either case, two per byte (systemd's `unhexmem()`).
    static func hex(_ digits: [UInt8]) throws(ParseError) -> [UInt8] {
        guard digits.count % 2 == 0 else { throw ParseError("odd number of hex digits") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                throw ParseError("not hex at digit \(index + 1)")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
