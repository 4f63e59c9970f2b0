import FoundationEssentials
import ReachabilityCore

/// The netlink decoder as a function of raw bytes, for the libFuzzer target in `fuzz/` and the
/// regression test that replays saved inputs: the bytes as a datagram the kernel sent, cut into
/// messages as the monitor's receive does (`NetlinkDatagram`), each decoded in place, the changes
/// applied to a state table.
package enum NetlinkFuzzTarget {
    /// - Returns: how many changes the bytes decoded to.
    @discardableResult
    package static func decode(_ data: [UInt8]) -> Int {
        var table = KernelStateTable()
        var changes = 0
        data.withUnsafeBytes { datagram in
            NetlinkDatagram.forEach(in: datagram) { item in
                switch item {
                case .message(let message):
                    for change in NetlinkMessageDecoder.changes(in: message) {
                        table.apply(change)
                        changes += 1
                    }
                case .overrun, .error:
                    break
                }
            }
        }
        _ = table.snapshot
        return changes
    }
}
