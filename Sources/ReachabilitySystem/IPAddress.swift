#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address: its bytes in network order, read from and written as text by the C
/// library (`inet_pton(3)`, `inet_ntop(3)`), so the text is the canonical one (`2001:db8::1`).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// IPv4 (4 bytes) or IPv6 (16 bytes).
    public enum Family: Hashable, Sendable {
        case ipv4, ipv6

        /// `AF_INET` or `AF_INET6`.
        public var rawValue: CInt {
            switch self {
            case .ipv4: return AF_INET
            case .ipv6: return AF_INET6
            }
        }
    }

    /// Which of the two.
    public let family: Family
    /// 4 or 16 bytes, network order.
    public let bytes: [UInt8]

    /// The address `bytes` spell: 4 bytes IPv4, 16 bytes IPv6; nil for another count.
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: family = .ipv4
        case 16: family = .ipv6
        default: return nil
        }
        self.bytes = bytes
    }

    /// Parses an IPv4 dotted quad or an IPv6 literal (`inet_pton(3)` with `AF_INET`, then
    /// `AF_INET6`); nil for anything else (host names, prefixes, zone ids).
    public init?(_ text: String) {
        if let v4 = Self.parse(text, AF_INET, count: 4) {
            family = .ipv4; bytes = v4
        } else if let v6 = Self.parse(text, AF_INET6, count: 16) {
            family = .ipv6; bytes = v6
        } else {
            return nil
        }
    }

    private static func parse(_ text: String, _ family: CInt, count: Int) -> [UInt8]? {
        var storage = in6_addr()
        let ok = withUnsafeMutableBytes(of: &storage) { raw in inet_pton(family, text, raw.baseAddress) } == 1
        return ok ? withUnsafeBytes(of: storage) { Array($0.prefix(count)) } : nil
    }

    /// The address at `pointer` of the family `AF_INET` or `AF_INET6` (an `in_addr`, an
    /// `in6_addr`, or the bytes of a netlink address attribute); nil for another family.
    public init?(family: CInt, bytes pointer: UnsafeRawPointer) {
        switch family {
        case AF_INET: self.init(.ipv4, pointer)
        case AF_INET6: self.init(.ipv6, pointer)
        default: return nil
        }
    }

    init(_ family: Family, _ pointer: UnsafeRawPointer) {
        self.family = family
        switch family {
        case .ipv4: bytes = Array(UnsafeRawBufferPointer(start: pointer, count: 4))
        case .ipv6: bytes = Array(UnsafeRawBufferPointer(start: pointer, count: 16))
        }
    }

    /// True for `0.0.0.0` and `::`.
    public var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }

    /// The canonical text (`inet_ntop(3)`): `192.0.2.1`, `2001:db8::1`, `::ffff:192.0.2.1`.
    public var description: String {
        bytes.withUnsafeBytes { raw in raw.baseAddress.flatMap { Self.text(family: family.rawValue, bytes: $0) } } ?? ""
    }

    /// The canonical text of the address at `pointer` (as `init(family:bytes:)` reads it), written
    /// by `inet_ntop(3)` on the stack: the netlink decoder names every address and route this way
    /// without an `IPAddress`, its array or a buffer on the heap. Nil for another family.
    public static func text(family: CInt, bytes pointer: UnsafeRawPointer) -> String? {
        guard family == AF_INET || family == AF_INET6 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { buffer in
            // inet_ntop fails only for a buffer too small or an unknown family: neither is possible.
            guard let written = inet_ntop(family, pointer, buffer.baseAddress, socklen_t(buffer.count)) else { return nil }
            return String(cString: written)
        }
    }
}
