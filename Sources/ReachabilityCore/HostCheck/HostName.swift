/// Why a host check has no answer. The server maps each case to a varlink error.
public enum HostCheckError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// A parameter is malformed: `org.varlink.service.InvalidParameter(parameter:)`.
    case invalidParameter(parameter: String, reason: String)
    /// The name does not resolve (or resolution timed out): `io.reachd.Reachability.HostNotFound(host:)`.
    case hostNotFound(host: String, reason: String)
    /// Too many look-ups in flight: `io.reachd.Reachability.Busy(retryAfterMs:)`.
    case busy(reason: String)

    public var description: String {
        switch self {
        case let .invalidParameter(parameter, reason): return "invalid \(parameter): \(reason)"
        case let .hostNotFound(host, reason): return "\(host): host not found (\(reason))"
        case let .busy(reason): return "busy (\(reason))"
        }
    }
}

/// What a valid `host` parameter is: a name to resolve, or an address literal.
public enum HostSpec: Equatable, Hashable, Sendable {
    /// A DNS name, without a trailing dot.
    case name(String)
    /// An IPv4 or IPv6 literal, in the form given (brackets removed).
    case address(String, AddressFamily)
}

/// Host-name validation and address-literal parsing, pure so that every rule is tested without
/// a resolver. The limits are RFC 1035's: 253 bytes for a name, 63 per label.
public enum HostName {
    public static let maxLength = 253
    public static let maxLabelLength = 63

    /// Validates `host` (a name, an IPv4 literal, an IPv6 literal with or without brackets).
    /// Throws `HostCheckError.invalidParameter(parameter: "host", …)` saying what is wrong.
    public static func parse(_ host: String) throws(HostCheckError) -> HostSpec {
        func invalid(_ reason: String) -> HostCheckError { .invalidParameter(parameter: "host", reason: reason) }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        if host.utf8.first == UInt8(ascii: "["), host.utf8.last == UInt8(ascii: "]") {
            let inner = String(host.dropFirst().dropLast())
            guard ipv6Bytes(inner) != nil else { throw invalid("\"\(host)\" is not an IPv6 address") }
            return .address(inner, .ipv6)
        }
        if host.contains(":") {
            guard ipv6Bytes(host) != nil else { throw invalid("\"\(host)\" is not an IPv6 address") }
            return .address(host, .ipv6)
        }
        if ipv4Bytes(host) != nil { return .address(host, .ipv4) }

        var name = host
        if name.hasSuffix(".") && name.count > 1 { name.removeLast() }
        let length = name.utf8.count
        guard length <= maxLength else { throw invalid("the name is \(length) bytes long, more than \(maxLength)") }
        for (offset, byte) in name.utf8.enumerated() where !isNameByte(byte) {
            let shown = byte < 0x80 ? String(UnicodeScalar(byte)) : "non-ASCII byte"
            throw invalid("invalid character \(shown.debugDescription) at offset \(offset) (names are letters, digits, '-', '_' and '.'; internationalized names in their xn-- form)")
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else { throw invalid("empty label in \"\(host)\"") }
            guard label.utf8.count <= maxLabelLength else {
                throw invalid("label \"\(label.prefix(16))…\" is \(label.utf8.count) bytes long, more than \(maxLabelLength)")
            }
            guard !label.hasPrefix("-") && !label.hasSuffix("-") else {
                throw invalid("label \"\(label)\" starts or ends with '-'")
            }
        }
        // A numeric last label makes the resolver read the name as a shortened IPv4 form
        // (`1.2.3` = 1.2.0.3); that is never what a user of a host name means.
        if let last = labels.last, last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            throw invalid("\"\(host)\" is neither a host name nor an IPv4 address")
        }
        return .name(name)
    }

    /// Checks a `port` parameter (1…65535).
    public static func validatePort(_ port: Int?) throws(HostCheckError) {
        guard let port else { return }
        guard (1...65535).contains(port) else {
            throw .invalidParameter(parameter: "port", reason: "port \(port) is not in 1…65535")
        }
    }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
            || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".")
    }

    /// The four bytes of a dotted-quad IPv4 literal, as `inet_pton(AF_INET)` accepts it
    /// (four decimal parts 0…255, no leading zeros); nil otherwise.
    public static func ipv4Bytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 3, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  part.utf8.count == 1 || part.utf8.first != UInt8(ascii: "0"),
                  let value = Int(part), value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// The sixteen bytes of an IPv6 literal as `inet_pton(AF_INET6)` accepts it (groups of one to
    /// four hex digits, one `::`, an optional dotted-quad tail); nil otherwise. Zone indices
    /// (`%eth0`) are not accepted.
    public static func ipv6Bytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }

        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            var result: [UInt16] = []
            for (i, field) in fields.enumerated() {
                if allowIPv4Tail && i == fields.count - 1 && field.contains(".") {
                    guard let v4 = ipv4Bytes(String(field)) else { return nil }
                    result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard (1...4).contains(field.utf8.count), let value = UInt16(field, radix: 16),
                      field.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }) else { return nil }
                result.append(value)
            }
            return result
        }

        let words: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowIPv4Tail: false),
                  let tail = groups(halves[1], allowIPv4Tail: true),
                  head.count + tail.count <= 7 else { return nil }
            words = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let all = groups(text, allowIPv4Tail: true), all.count == 8 else { return nil }
            words = all
        }
        return words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
