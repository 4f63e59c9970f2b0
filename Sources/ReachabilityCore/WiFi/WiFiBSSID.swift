/// An access point's MAC address (its BSSID). Location data: who may see it is the caller's
/// decision, not this type's.
public struct WiFiBSSID: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The six bytes, in transmission order.
    public let bytes: [UInt8]

    /// From six bytes (wpa_supplicant's `BSS.BSSID`, nl80211's `NL80211_ATTR_MAC`); nil for any
    /// other length, and for the all-zero and broadcast addresses, which no access point has
    /// (NetworkManager refuses both too).
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        let bytes = Array(bytes)
        guard bytes.contains(where: { $0 != 0 }), bytes.contains(where: { $0 != 0xFF }) else { return nil }
        self.bytes = bytes
    }

    /// From text `aa:bb:cc:dd:ee:ff` (either case; iwd's `ConnectedBss`, NetworkManager's
    /// `HwAddress`); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // Hex digits only: UInt8(_:radix:) would also take a sign ("+f").
            guard part.utf8.count == 2, part.utf8.allSatisfy(Self.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes: bytes)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// `aa:bb:cc:dd:ee:ff`, lower case.
    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }
}
