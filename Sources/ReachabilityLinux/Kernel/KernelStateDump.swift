import CNetlink
import ReachabilityCore

/// The kernel's links, addresses, routes and rules as the monitor keeps them, read afresh
/// (RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE dumps) on a short-lived socket.
enum KernelStateDump {
    /// Dumps the state of `networkNamespace` (nil: the caller's own); a dump the kernel's
    /// changes interrupted (NLM_F_DUMP_INTR) is read again, up to five times.
    static func read(networkNamespace: String?) throws -> KernelStateTable {
        final class Collector { var changes: [KernelChange] = [] }
        var attempt = 0
        while true {
            attempt += 1
            let collector = Collector()
            do {
                try NetworkNamespace.run(in: networkNamespace) {
                    let socket = try NetlinkSocket { message in
                        collector.changes += NetlinkMessageDecoder.changes(in: message)
                    }
                    try socket.setReceiveBufferSize(1 << 20)
                    for type in [RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE] { try socket.dump(Int32(type)) }
                }
                return KernelStateTable(collector.changes)
            } catch let error as NetlinkError where error.code == NLE_DUMP_INTR && attempt < 5 {
                continue
            }
        }
    }
}
