import CNetlink

extension NetlinkSocket {
    /// The monitor's socket: non-blocking, with a receive buffer of `receiveBufferSize` bytes,
    /// subscribed to the link, address, route, rule and router-option groups, in
    /// `networkNamespace` (nil: the caller's own).
    static func monitoring(networkNamespace: String?, receiveBufferSize: Int) throws -> NetlinkSocket {
        try NetworkNamespace.run(in: networkNamespace) { () throws -> NetlinkSocket in
            let socket = try NetlinkSocket()
            try socket.setNonBlocking()
            try socket.setReceiveBufferSize(receiveBufferSize)
            try socket.addMemberships([RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                                       RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
                                       RTNLGRP_ND_USEROPT])
            return socket
        }
    }
}
