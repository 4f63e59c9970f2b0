import CNetlink
import FoundationEssentials
import ReachabilityCore

/// The netlink decoder as a function of raw bytes, for the libFuzzer target in `fuzz/` and the
/// regression test that replays saved inputs: the bytes as a buffer the kernel sent, cut into
/// messages as libnl's receive loop does (`nlmsg_ok`, `nlmsg_next`), each converted to an
/// `nl_msg` as libnl receives it and decoded, the changes applied to a state table.
public enum NetlinkFuzzTarget {
    /// - Returns: how many changes the bytes decoded to.
    @discardableResult
    public static func decode(_ data: [UInt8]) -> Int {
        guard data.count >= MemoryLayout<nlmsghdr>.size else { return 0 }
        var table = KernelStateTable()
        var changes = 0
        // nlmsg_* read the header in place: give them aligned memory of their own.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: data.count, alignment: 16)
        defer { buffer.deallocate() }
        buffer.copyMemory(from: data, byteCount: data.count)
        var remaining = Int32(data.count)
        var header: UnsafeMutablePointer<nlmsghdr>? = buffer.assumingMemoryBound(to: nlmsghdr.self)
        while let current = header, nlmsg_ok(current, remaining) != 0 {
            if let message = nlmsg_convert(current) {
                // What a message read from a NETLINK_ROUTE socket carries; libnl picks its parser by it.
                nlmsg_set_proto(message, NETLINK_ROUTE)
                for change in NetlinkMessageDecoder.changes(in: message) {
                    table.apply(change)
                    changes += 1
                }
                nlmsg_free(message)
            }
            header = nlmsg_next(current, &remaining)
        }
        _ = table.snapshot
        return changes
    }
}
