/// The messages of one netlink datagram (`struct nlmsghdr`: length (u32, header included), type
/// (u16), flags (u16), sequence and port (u32 each), payload, padding to 4 bytes), read in place
/// as `NLMSG_OK` and `NLMSG_NEXT` of <linux/netlink.h> walk them.
enum NetlinkDatagram {
    /// What one message of a datagram is.
    enum Item {
        /// A message for the decoder: its header and payload (`nlmsg_len` bytes).
        case message(UnsafeRawBufferPointer)
        /// `NLMSG_OVERRUN`: the kernel says data was lost.
        case overrun
        /// `NLMSG_ERROR` with the (positive) error number it carries; 0 is an acknowledgement.
        case error(Int32)
    }

    static let headerSize = 16
    static let noop = 1, error = 2, done = 3, overrun = 4

    /// Calls `body` with each message of `datagram` but `NLMSG_NOOP` and `NLMSG_DONE`. Stops
    /// quietly, as `NLMSG_OK` does, at a header whose length does not cover itself or leaves the
    /// datagram: what the kernel sends is well formed, and nothing after a bad length can be
    /// found again.
    static func forEach(in datagram: UnsafeRawBufferPointer, _ body: (Item) -> Void) {
        var position = 0
        while datagram.count - position >= headerSize {
            let length = Int(datagram.loadUnaligned(fromByteOffset: position, as: UInt32.self))
            let type = Int(datagram.loadUnaligned(fromByteOffset: position + 4, as: UInt16.self))
            guard length >= headerSize, length <= datagram.count - position else { return }
            switch type {
            case noop, done:
                break
            case overrun:
                body(.overrun)
            case error:
                // struct nlmsgerr: a negative errno, then the request's header.
                let code = length >= headerSize + 4
                    ? datagram.loadUnaligned(fromByteOffset: position + headerSize, as: Int32.self) : 0
                body(.error(code == Int32.min ? Int32.max : -code))
            default:
                body(.message(UnsafeRawBufferPointer(rebasing: datagram[position..<(position + length)])))
            }
            // NLMSG_ALIGN pads to 4 bytes, as NLA_ALIGN does.
            position += NetlinkAttributes.aligned(length)
        }
    }
}
