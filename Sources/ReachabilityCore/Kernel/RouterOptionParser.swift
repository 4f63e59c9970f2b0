/// Reads the neighbour discovery options of a router advertisement that reachd understands
/// (RFC 4861 §4.6 framing): RDNSS and DNSSL (RFC 8106), the captive-portal URI (RFC 8910) and
/// PREF64 (RFC 8781). Every length is checked against the bytes given; whatever does not fit
/// the RFC, or what reachd will not pass on to apps (a URI that is not an https URL, too long,
/// not UTF-8, with control characters), is an error naming what is wrong.
public enum RouterOptionParser {
    /// ND option types.
    public static let rdnss = 25
    public static let dnssl = 31
    public static let captivePortal = 37
    public static let pref64 = 38

    /// The longest captive-portal API URI passed on, in bytes. Real ones are short; an option
    /// can carry some 2 KiB.
    public static let maxURIBytes = 1024
    /// The most servers, domains and prefixes kept per interface (`RouterAnnouncements`).
    public static let maxServers = 8
    public static let maxDomains = 16

    /// A name for logs.
    public static func name(of type: Int) -> String {
        switch type {
        case rdnss: return "RDNSS"
        case dnssl: return "DNSSL"
        case captivePortal: return "captive portal"
        case pref64: return "PREF64"
        default: return "type \(type)"
        }
    }

    /// The options in `bytes` (one or more, each `type, length in 8-octet units, …`), received
    /// on interface `ifindex`. Options of other types are skipped; nil content for those.
    /// Returns each understood option or the error that stopped it; framing that does not add
    /// up ends the walk with an error.
    public static func parse<Bytes: RandomAccessCollection>(_ bytes: Bytes, ifindex: Int) -> [Result<RouterOption, RouterOptionError>]
        where Bytes.Element == UInt8, Bytes.Index == Int {
        var results: [Result<RouterOption, RouterOptionError>] = []
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            guard bytes.endIndex - offset >= 2 else {
                results.append(.failure(RouterOptionError(type: Int(bytes[offset]), problem: "truncated header (\(bytes.endIndex - offset) byte)")))
                break
            }
            let type = Int(bytes[offset]), units = Int(bytes[offset + 1])
            guard units > 0 else {
                results.append(.failure(RouterOptionError(type: type, problem: "length 0")))
                break
            }
            let length = units * 8
            guard length <= bytes.endIndex - offset else {
                results.append(.failure(RouterOptionError(type: type, problem: "length \(length) exceeds the \(bytes.endIndex - offset) bytes received")))
                break
            }
            let option = Array(bytes[offset..<(offset + length)])
            offset += length
            switch type {
            case rdnss, dnssl, captivePortal, pref64:
                do throws(RouterOptionError) {
                    results.append(.success(try parseOne(option, type: type, ifindex: ifindex)))
                } catch {
                    results.append(.failure(error))
                }
            default:
                continue
            }
        }
        return results
    }

    /// One whole option of a type reachd understands.
    static func parseOne(_ option: [UInt8], type: Int, ifindex: Int) throws(RouterOptionError) -> RouterOption {
        func fail(_ problem: String) -> RouterOptionError { RouterOptionError(type: type, problem: problem) }
        func lifetime() -> UInt32 {
            UInt32(option[4]) << 24 | UInt32(option[5]) << 16 | UInt32(option[6]) << 8 | UInt32(option[7])
        }
        switch type {
        case rdnss:
            // type, length, reserved (2), lifetime (4), then 16 bytes per server.
            guard option.count >= 24, (option.count - 8) % 16 == 0 else {
                throw fail("length \(option.count) is not 8 + 16 per address")
            }
            var servers: [String] = []
            for start in stride(from: 8, to: option.count, by: 16) {
                let text = ipv6Text(Array(option[start..<(start + 16)]))
                if !servers.contains(text) { servers.append(text) }
            }
            return RouterOption(ifindex: ifindex, content: .dnsServers(servers), lifetime: lifetime())
        case dnssl:
            guard option.count >= 16 else { throw fail("length \(option.count) leaves no room for a domain") }
            let domains = try searchList(option[8...], type: type)
            guard !domains.isEmpty else { throw fail("no domain") }
            return RouterOption(ifindex: ifindex, content: .searchDomains(domains), lifetime: lifetime())
        case captivePortal:
            // type, length, the URI padded with NUL to the option's end.
            var uri = option[2...]
            while let last = uri.last, last == 0 { uri.removeLast() }
            guard !uri.isEmpty else { throw fail("empty URI") }
            guard uri.count <= maxURIBytes else { throw fail("URI of \(uri.count) bytes (at most \(maxURIBytes))") }
            guard !uri.contains(0) else { throw fail("NUL inside the URI") }
            guard let text = String(validating: uri, as: UTF8.self) else { throw fail("URI is not UTF-8") }
            guard !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || TerminalText.needsEscape($0) }) else {
                throw fail("URI with white space or control characters")
            }
            guard text == RouterOption.unrestricted || text.lowercased().hasPrefix("https://") else {
                throw fail("URI \(TerminalText.escaped(String(text.prefix(100)))) is neither an https URL nor \(RouterOption.unrestricted)")
            }
            return RouterOption(ifindex: ifindex, content: .captivePortal(text), lifetime: nil)
        case pref64:
            // type, length 2, scaled lifetime (13 bits) and prefix length code (3 bits), 96 bits of prefix.
            guard option.count == 16 else { throw fail("length \(option.count), not 16") }
            let word = UInt16(option[2]) << 8 | UInt16(option[3])
            let prefixLengths = [96, 64, 56, 48, 40, 32]
            let code = Int(word & 0x7)
            guard code < prefixLengths.count else { throw fail("prefix length code \(code)") }
            let length = prefixLengths[code]
            var address = Array(option[4..<16]) + [0, 0, 0, 0]
            // Bits past the prefix length are ignored (RFC 8781 §4).
            for i in (length / 8)..<16 { address[i] = 0 }
            return RouterOption(ifindex: ifindex, content: .nat64Prefix("\(ipv6Text(address))/\(length)"),
                                lifetime: UInt32(word >> 3) * 8)
        default:
            throw fail("not an option reachd reads")
        }
    }

    /// RFC 1035 §3.1 names, one after another, then NUL padding to the option's end.
    static func searchList(_ bytes: ArraySlice<UInt8>, type: Int) throws(RouterOptionError) -> [String] {
        var domains: [String] = []
        var labels: [String] = []
        var nameLength = 0
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let count = Int(bytes[offset])
            offset += 1
            if count == 0 {
                // The end of a name, or padding after the last one.
                if labels.isEmpty { continue }
                let name = labels.joined(separator: ".")
                if !domains.contains(name) { domains.append(name) }
                labels = []
                nameLength = 0
                continue
            }
            guard count <= 63 else { throw RouterOptionError(type: type, problem: "label of \(count) bytes (at most 63; compression is not allowed)") }
            guard offset + count <= bytes.endIndex else { throw RouterOptionError(type: type, problem: "label runs past the option") }
            let label = bytes[offset..<(offset + count)]
            offset += count
            guard label.allSatisfy({ isHostCharacter($0) }) else {
                throw RouterOptionError(type: type, problem: "label with bytes that are not letters, digits, - or _")
            }
            nameLength += count + 1
            guard nameLength <= 254 else { throw RouterOptionError(type: type, problem: "name longer than 253 bytes") }
            labels.append(String(decoding: label, as: UTF8.self))
        }
        guard labels.isEmpty else { throw RouterOptionError(type: type, problem: "name without its terminating zero") }
        return domains
    }

    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }

    /// RFC 5952 text of sixteen bytes: lower case, the longest run of two or more zero groups as `::`.
    public static func ipv6Text(_ bytes: [UInt8]) -> String {
        var groups: [UInt16] = []
        for i in stride(from: 0, to: 16, by: 2) {
            groups.append(UInt16(i < bytes.count ? bytes[i] : 0) << 8 | UInt16(i + 1 < bytes.count ? bytes[i + 1] : 0))
        }
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8 && groups[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard bestStart >= 0 else { return hex(0..<8) }
        // An IPv4-mapped address keeps its dotted tail (::ffff:192.0.2.1).
        if bestStart == 0 && bestLength == 5 && groups[5] == 0xffff {
            return "::ffff:\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])"
        }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }
}
