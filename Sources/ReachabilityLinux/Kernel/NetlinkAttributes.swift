/// The attributes of a netlink message (`struct rtattr` / `struct nlattr`: length (u16, header
/// included), type (u16), payload, padding to 4 bytes), read in place.
enum NetlinkAttributes {
    /// `NLA_ALIGN` / `RTA_ALIGN`.
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }

    /// Calls `body` with each attribute's type (the nested and byte-order flags masked off) and
    /// payload, from `offset` (itself aligned up) to the end of `buffer`. Like libnl's
    /// `nla_parse`, it stops quietly at an attribute whose length does not cover its header or
    /// leaves the buffer. Returns false as soon as `body` does (it found the message malformed).
    static func forEach(in buffer: UnsafeRawBufferPointer, from offset: Int,
                        _ body: (_ type: Int, _ payload: UnsafeRawBufferPointer) -> Bool) -> Bool {
        var position = aligned(offset)
        while position + 4 <= buffer.count {
            let length = Int(buffer.loadUnaligned(fromByteOffset: position, as: UInt16.self))
            let type = Int(buffer.loadUnaligned(fromByteOffset: position + 2, as: UInt16.self)) & 0x3fff
            guard length >= 4, position + length <= buffer.count else { return true }
            guard body(type, UnsafeRawBufferPointer(rebasing: buffer[(position + 4)..<(position + length)])) else { return false }
            position += aligned(length)
        }
        return true
    }

    /// A string attribute's bytes up to the first NUL, when they are not valid UTF-8 (nil when
    /// they are: `string` reads them exactly).
    static func bytesUnlessUTF8(_ payload: UnsafeRawBufferPointer) -> [UInt8]? {
        let end = payload.firstIndex(of: 0) ?? payload.count
        let bytes = UnsafeRawBufferPointer(rebasing: payload[0..<end])
        guard String(validating: bytes, as: UTF8.self) == nil else { return nil }
        return Array(bytes)
    }

    /// A string attribute (`NLA_STRING`): its bytes up to the first NUL.
    static func string(_ payload: UnsafeRawBufferPointer) -> String {
        let end = payload.firstIndex(of: 0) ?? payload.count
        return String(decoding: UnsafeRawBufferPointer(rebasing: payload[0..<end]), as: UTF8.self)
    }
}
