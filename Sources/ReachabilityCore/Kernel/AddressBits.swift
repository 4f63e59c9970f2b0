/// An IPv4 or IPv6 address as 128 bits, for prefix matching in route and rule look-ups: an IPv6
/// address as it is, an IPv4 address in the top 32 bits (so a prefix length counts from the
/// same end for both families).
public struct AddressBits: Hashable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

    /// The address `text` of `family` (`192.0.2.1`, `2001:db8::1`); nil when it is not one.
    public init?(_ text: String, family: AddressFamily) {
        switch family {
        case .ipv4:
            guard let bytes = HostName.ipv4Bytes(text) else { return nil }
            self.init(bytes: bytes)
        case .ipv6:
            guard let bytes = HostName.ipv6Bytes(text) else { return nil }
            self.init(bytes: bytes)
        }
    }

    /// Four (IPv4) or sixteen (IPv6) bytes in network order; other counts give zero bits.
    public init(bytes: [UInt8]) {
        var high: UInt64 = 0, low: UInt64 = 0
        for (i, byte) in bytes.prefix(16).enumerated() {
            if i < 8 { high |= UInt64(byte) << (56 - 8 * i) } else { low |= UInt64(byte) << (56 - 8 * (i - 8)) }
        }
        self.init(high: high, low: low)
    }

    /// True when the first `prefixLength` bits (0…128) of the two are equal: `self` lies in the
    /// prefix `other/prefixLength`. A length of 0 matches everything.
    public func hasPrefix(_ other: AddressBits, length prefixLength: Int) -> Bool {
        let length = min(max(prefixLength, 0), 128)
        if length == 0 { return true }
        if length <= 64 {
            let mask: UInt64 = length == 64 ? ~0 : ~(~UInt64(0) >> UInt64(length))
            return (high ^ other.high) & mask == 0
        }
        guard high == other.high else { return false }
        let rest = length - 64
        let mask: UInt64 = rest == 64 ? ~0 : ~(~UInt64(0) >> UInt64(rest))
        return (low ^ other.low) & mask == 0
    }

    /// The bits in hexadecimal (for test failures).
    public var description: String {
        let h = String(high, radix: 16), l = String(low, radix: 16)
        return String(repeating: "0", count: 16 - h.count) + h + ":" + String(repeating: "0", count: 16 - l.count) + l
    }
}
