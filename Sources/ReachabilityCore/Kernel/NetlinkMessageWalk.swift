/// The `struct nlmsghdr` framing shared by the netlink reply readers: every length checked
/// against the datagram, the control messages (`NLMSG_ERROR`, `NLMSG_DONE`, `NLMSG_OVERRUN`)
/// turned into errors or the end of the dump, the rest handed to the reader.
enum NetlinkMessageWalk {
    // <linux/netlink.h>
    static let headerSize = 16                 // sizeof(struct nlmsghdr)
    static let typeError: UInt16 = 2           // NLMSG_ERROR
    static let typeDone: UInt16 = 3            // NLMSG_DONE
    static let typeOverrun: UInt16 = 4         // NLMSG_OVERRUN

    /// Walks one datagram, calling `visit` with the type, flags and payload of each message of
    /// `sequence` (nil: of any) that is not `NLMSG_ERROR`, `NLMSG_DONE` or `NLMSG_OVERRUN`
    /// (`NLMSG_NOOP` included: the reader passes over what it does not know).
    /// - Returns: whether `NLMSG_DONE` was read (the walk stops there).
    /// - Throws: the kernel's error (`NLMSG_ERROR` other than an acknowledgement, a negative
    ///   errno in `NLMSG_DONE`), an overrun, or framing that cannot be walked.
    static func walk<P>(_ datagram: UnsafeRawBufferPointer, sequence: UInt32?, as _: P.Type,
                        _ visit: (_ type: UInt16, _ flags: UInt16, _ payload: UnsafeRawBufferPointer) -> Void)
        throws(NetlinkReplyError<P>) -> Bool {
        var offset = 0
        while datagram.count - offset >= headerSize {
            let length = Int(datagram.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let type = datagram.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            let flags = datagram.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self)
            let messageSequence = datagram.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            guard length >= headerSize else {
                throw .malformed(offset: offset, problem: "message length \(length) is shorter than its header")
            }
            guard length <= datagram.count - offset else {
                throw .malformed(offset: offset, problem: "message length \(length) exceeds the \(datagram.count - offset) bytes left")
            }
            let payload = UnsafeRawBufferPointer(rebasing: datagram[(offset + headerSize)..<(offset + length)])
            let messageOffset = offset
            offset += min(aligned(length), datagram.count - offset)
            if let sequence, messageSequence != sequence { continue }
            switch type {
            case typeDone:
                // A dump that failed part way ends with the negative errno in NLMSG_DONE.
                if payload.count >= 4 {
                    let code = payload.loadUnaligned(as: Int32.self)
                    if code < 0 { throw .kernel(errno: code == Int32.min ? Int32.max : -code) }
                }
                return true
            case typeError:
                guard payload.count >= 4 else {
                    throw .malformed(offset: messageOffset, problem: "error message of \(payload.count) bytes")
                }
                let code = payload.loadUnaligned(as: Int32.self)
                // errno 0 is an acknowledgement: nothing to report.
                if code == 0 { continue }
                throw .kernel(errno: code == Int32.min ? Int32.max : (code < 0 ? -code : code))
            case typeOverrun:
                throw .overrun
            default:
                visit(type, flags, payload)
            }
        }
        if offset < datagram.count {
            throw .malformed(offset: offset, problem: "\(datagram.count - offset) bytes left, less than a message header")
        }
        return false
    }

    /// Netlink's 4-byte alignment (NLMSG_ALIGN).
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }
}
