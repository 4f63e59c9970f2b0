import CNetlink
import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// Turns rtnetlink messages into `KernelChange`s by reading them in place: the fixed header
/// (`struct ifinfomsg`, `ifaddrmsg`, `rtmsg` of <linux/rtnetlink.h>) and the attributes reachd
/// needs, every length checked against the message. It reads what libnl's parsers read for
/// `rtnl_link`, `rtnl_addr` and `rtnl_route` (the tests compare the two on a real kernel's
/// messages), without building their objects: on an event's path that was most of the time
/// between the netlink read and classification.
enum NetlinkMessageDecoder {
    /// Decodes one message received by libnl (`nlmsg_hdr`; libnl has checked that its length
    /// fits what was received).
    static func changes(in message: OpaquePointer) -> [KernelChange] {
        guard let header = nlmsg_hdr(message) else { return [] }
        return changes(in: UnsafeRawBufferPointer(start: header, count: Int(header.pointee.nlmsg_len)))
    }

    /// Decodes one message: its `nlmsghdr` and payload. Messages that do not matter (other types,
    /// AF_BRIDGE port news, other tables' routes, malformed ones) give none.
    static func changes(in message: UnsafeRawBufferPointer) -> [KernelChange] {
        let headerSize = MemoryLayout<nlmsghdr>.size
        guard message.count >= headerSize else { return [] }
        let length = min(Int(message.loadUnaligned(as: UInt32.self)), message.count)
        let type = Int(message.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        let flags = Int32(message.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        guard length >= headerSize else { return [] }
        let body = UnsafeRawBufferPointer(rebasing: message[headerSize..<length])
        switch type {
        case RTM_NEWLINK, RTM_DELLINK: return link(body, removed: type == RTM_DELLINK)
        case RTM_NEWADDR, RTM_DELADDR: return address(body, removed: type == RTM_DELADDR)
        case RTM_NEWROUTE, RTM_DELROUTE: return route(body, removed: type == RTM_DELROUTE, replace: flags & Int32(NLM_F_REPLACE) != 0)
        case RTM_NEWRULE, RTM_DELRULE: return rule(body, removed: type == RTM_DELRULE)
        case RTM_NEWNDUSEROPT: return userOptions(body)
        default: return []
        }
    }

    private static func link(_ body: UnsafeRawBufferPointer, removed: Bool) -> [KernelChange] {
        // struct ifinfomsg: family, pad, type (u16), index (s32), flags (u32), change (u32).
        guard body.count >= MemoryLayout<ifinfomsg>.size else { return [] }
        // A bridge reports its ports with AF_BRIDGE link messages; their RTM_DELLINK means "left
        // the bridge", not "deleted".
        guard Int32(body[0]) != AF_BRIDGE else { return [] }
        let arpType = Int(body.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let index = Int(body.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        let flags = body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        var name: String?, rawName: [UInt8]?, kind: String?, operstate = 0
        var group: UInt32 = 0
        let wellFormed = NetlinkAttributes.forEach(in: body, from: MemoryLayout<ifinfomsg>.size) { type, payload in
            switch type {
            case Int(IFLA_IFNAME):
                name = NetlinkAttributes.string(payload)
                rawName = NetlinkAttributes.bytesUnlessUTF8(payload)
            case Int(IFLA_OPERSTATE): if let value = payload.first { operstate = Int(value) }
            case Int(IFLA_GROUP): if payload.count >= 4 { group = payload.loadUnaligned(as: UInt32.self) }
            case Int(IFLA_LINKINFO):
                _ = NetlinkAttributes.forEach(in: payload, from: 0) { infoType, info in
                    if infoType == Int(IFLA_INFO_KIND) { kind = NetlinkAttributes.string(info) }
                    return true
                }
            default: break
            }
            return true
        }
        // libnl refuses a link without a name, and so does the state table's model of one.
        guard wellFormed, let name else { return [] }
        if removed { return [.linkRemoved(index: index)] }
        return [.link(LinkFacts(index: index, name: name, rawName: rawName, rtnlKind: kind, arpType: arpType,
                                up: flags & UInt32(IFF_UP.rawValue) != 0,
                                carrier: flags & UInt32(IFF_LOWER_UP.rawValue) != 0,
                                loopback: flags & UInt32(IFF_LOOPBACK.rawValue) != 0,
                                operstate: LinkFacts.operstateName(operstate), group: group))]
    }

    private static func address(_ body: UnsafeRawBufferPointer, removed: Bool) -> [KernelChange] {
        // struct ifaddrmsg: family, prefixlen, flags, scope (u8 each), index (u32).
        guard body.count >= MemoryLayout<ifaddrmsg>.size, let family = family(Int32(body[0])) else { return [] }
        var addressFlags = UInt32(body[2])
        var local: UnsafeRawBufferPointer?, address: UnsafeRawBufferPointer?
        let wellFormed = NetlinkAttributes.forEach(in: body, from: MemoryLayout<ifaddrmsg>.size) { type, payload in
            switch type {
            case Int(IFA_LOCAL): local = payload
            case Int(IFA_ADDRESS): address = payload
            // The flags that do not fit the header's byte.
            case Int(IFA_FLAGS): if payload.count >= 4 { addressFlags = payload.loadUnaligned(as: UInt32.self) }
            default: break
            }
            return true
        }
        // IPv6 sends its address as IFA_ADDRESS alone; IPv4 sends IFA_LOCAL too, and then
        // IFA_ADDRESS is the peer's (point-to-point) when they differ: the local one is ours.
        guard wellFormed, let ours = local ?? address, let text = string(ours, family: family) else { return [] }
        let state = AddressState(ifindex: Int(body.loadUnaligned(fromByteOffset: 4, as: UInt32.self)), family: family, address: text,
                                 prefixLength: Int(body[1]), scope: scope(Int32(body[3])),
                                 tentative: addressFlags & UInt32(IFA_F_TENTATIVE | IFA_F_DADFAILED) != 0)
        return [removed ? .addressRemoved(state) : .addressAdded(state)]
    }

    private static func route(_ body: UnsafeRawBufferPointer, removed: Bool, replace: Bool) -> [KernelChange] {
        // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type (u8 each), flags (u32).
        guard body.count >= MemoryLayout<rtmsg>.size, let family = family(Int32(body[0])) else { return [] }
        // The local table's routes (which every address and every IPv6 link brings) are dropped
        // here, before their attributes are read. A table above 255 is only in RTA_TABLE
        // (`rtm_table` says RT_TABLE_COMPAT).
        var table = UInt32(body[4])
        guard table != RT_TABLE_LOCAL.rawValue else { return [] }
        // Cached clones (RTM_F_CLONED) are not routes of the table.
        guard body.loadUnaligned(fromByteOffset: 8, as: UInt32.self) & UInt32(RTM_F_CLONED) == 0 else { return [] }
        let prefixLength = Int(body[1])
        var destination: String?, gateway: String?, oif = 0, metric: UInt32 = 0
        var hops: [(oif: Int, gateway: String?)] = []
        let wellFormed = NetlinkAttributes.forEach(in: body, from: MemoryLayout<rtmsg>.size) { type, payload in
            switch type {
            case Int(RTA_DST.rawValue): destination = string(payload, family: family)
            case Int(RTA_GATEWAY.rawValue): gateway = string(payload, family: family)
            case Int(RTA_OIF.rawValue): if payload.count >= 4 { oif = Int(payload.loadUnaligned(as: UInt32.self)) }
            case Int(RTA_PRIORITY.rawValue): if payload.count >= 4 { metric = payload.loadUnaligned(as: UInt32.self) }
            case Int(RTA_TABLE.rawValue): if payload.count >= 4 { table = payload.loadUnaligned(as: UInt32.self) }
            case Int(RTA_MULTIPATH.rawValue):
                guard let multipath = nextHops(payload, family: family) else { return false }
                hops = multipath
            default: break
            }
            return true
        }
        guard wellFormed, table != RT_TABLE_LOCAL.rawValue else { return [] }
        // Without RTA_MULTIPATH the route's own RTA_OIF and RTA_GATEWAY are its one next hop.
        if hops.isEmpty { hops = [(oif, gateway)] }
        let routeType = RouteLookup.routeType(rtm: body[7])
        let fromRouterAdvertisement = body[5] == UInt8(RTPROT_RA)
        return hops.map { hop in
            let route = RouteState(family: family, table: table, destination: prefixLength == 0 ? nil : destination,
                                   prefixLength: prefixLength, gateway: hop.gateway, oif: hop.oif, metric: metric, type: routeType,
                                   fromRouterAdvertisement: fromRouterAdvertisement)
            return removed ? .routeRemoved(route) : .routeAdded(route, replace: replace)
        }
    }

    private static func rule(_ body: UnsafeRawBufferPointer, removed: Bool) -> [KernelChange] {
        // struct fib_rule_hdr: family, dst_len, src_len, tos, table, res1, res2, action (u8 each), flags (u32).
        guard body.count >= MemoryLayout<fib_rule_hdr>.size, let family = family(Int32(body[0])) else { return [] }
        let destinationLength = Int(body[1]), sourceLength = Int(body[2])
        let headerFlags = body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        var table = UInt32(body[4])
        var priority: UInt32 = 0, gotoTarget: UInt32 = 0
        var rule = RoutingRule(family: family, priority: 0, action: .nop)
        rule.invert = headerFlags & UInt32(FIB_RULE_INVERT) != 0
        rule.tos = body[3]
        var destination: String?, source: String?
        let wellFormed = NetlinkAttributes.forEach(in: body, from: MemoryLayout<fib_rule_hdr>.size) { type, payload in
            func u32() -> UInt32? { payload.count >= 4 ? payload.loadUnaligned(as: UInt32.self) : nil }
            func range() -> (UInt32, UInt32)? {
                payload.count >= 8 ? (payload.loadUnaligned(as: UInt32.self), payload.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) : nil
            }
            func ports() -> RoutingRule.PortRange? {
                payload.count >= 4 ? RoutingRule.PortRange(payload.loadUnaligned(as: UInt16.self),
                                                           payload.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) : nil
            }
            switch type {
            case Int(FRA_DST): destination = string(payload, family: family)
            case Int(FRA_SRC): source = string(payload, family: family)
            case Int(FRA_IIFNAME): rule.inputInterface = NetlinkAttributes.string(payload)
            case Int(FRA_OIFNAME): rule.outputInterface = NetlinkAttributes.string(payload)
            case Int(FRA_GOTO): gotoTarget = u32() ?? 0
            case Int(FRA_PRIORITY): priority = u32() ?? 0
            case Int(FRA_FWMARK): rule.fwmark = u32() ?? 0
            case Int(FRA_FWMASK): rule.fwmask = u32() ?? 0
            case Int(FRA_TUN_ID): if payload.count >= 8 { rule.tunnelID = payload.loadUnaligned(as: UInt64.self) }
            case Int(FRA_SUPPRESS_IFGROUP):
                if let value = u32(), value != UInt32.max { rule.suppressInterfaceGroup = value }
            case Int(FRA_SUPPRESS_PREFIXLEN):
                if let value = u32(), value != UInt32.max { rule.suppressPrefixLength = Int(value) }
            case Int(FRA_TABLE): table = u32() ?? table
            case Int(FRA_L3MDEV): rule.l3mdev = payload.first.map { $0 != 0 } ?? false
            case Int(FRA_UID_RANGE):
                if let (start, end) = range(), start <= end { rule.uidRange = start...end }
            case Int(FRA_IP_PROTO): rule.ipProtocol = payload.first ?? 0
            case Int(FRA_SPORT_RANGE): rule.sourcePorts = ports()
            case Int(FRA_DPORT_RANGE): rule.destinationPorts = ports()
            case Self.fraDSCP: if let value = payload.first { rule.tos = value << 2 }
            default: break
            }
            return true
        }
        guard wellFormed else { return [] }
        rule.priority = priority
        rule.inputInterfaceDetached = headerFlags & UInt32(FIB_RULE_IIF_DETACHED) != 0
        // The kernel sends a mask only with a mark; a mark alone is compared whole.
        if rule.fwmark != 0 && rule.fwmask == 0 { rule.fwmask = UInt32.max }
        if let destination { rule.destination = RoutingRule.Prefix(address: destination, length: destinationLength, family: family) }
        if let source { rule.source = RoutingRule.Prefix(address: source, length: sourceLength, family: family) }
        switch Int(body[7]) {
        case Int(FR_ACT_TO_TBL): rule.action = .lookup(table: table)
        case Int(FR_ACT_GOTO): rule.action = .goto(priority: gotoTarget)
        case Int(FR_ACT_NOP): rule.action = .nop
        case Int(FR_ACT_BLACKHOLE): rule.action = .blackhole
        case Int(FR_ACT_UNREACHABLE): rule.action = .unreachable
        case Int(FR_ACT_PROHIBIT): rule.action = .prohibit
        default: rule.action = .unknown(body[7])
        }
        return [removed ? .ruleRemoved(rule) : .ruleAdded(rule)]
    }

    /// RTM_NEWNDUSEROPT: the options of a router advertisement that the kernel does not act on
    /// itself. `struct nduseroptmsg`: family, pad (u8 each), opts_len (u16), ifindex (s32),
    /// icmp_type, icmp_code (u8 each), pad (u16, u32); then `opts_len` bytes of ND options, then
    /// attributes (NDUSEROPT_SRCADDR). Only router advertisements (ICMPv6 134) of AF_INET6.
    private static func userOptions(_ body: UnsafeRawBufferPointer) -> [KernelChange] {
        let headerSize = MemoryLayout<nduseroptmsg>.size
        guard body.count >= headerSize, Int32(body[0]) == AF_INET6, body[8] == 134 else { return [] }
        let optionsLength = Int(body.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let index = Int(body.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        guard index > 0 else { return [] }
        guard optionsLength <= body.count - headerSize else {
            return [.routerOptionRejected(ifindex: index, RouterOptionError(
                type: optionsLength > 0 && body.count > headerSize ? Int(body[headerSize]) : 0,
                problem: "options length \(optionsLength) exceeds the \(body.count - headerSize) bytes of the message"))]
        }
        let options = UnsafeRawBufferPointer(rebasing: body[headerSize..<(headerSize + optionsLength)])
        // The router's address: the captive-portal URI ages with that router's advertisements.
        var router: String?
        let attributes = NetlinkAttributes.aligned(headerSize + optionsLength)
        if attributes < body.count {
            _ = NetlinkAttributes.forEach(in: body, from: attributes) { type, value in
                if type == ndUserOptionSourceAddress, value.count == 16 { router = string(value, family: .ipv6) }
                return true
            }
        }
        return RouterOptionParser.parse(options, ifindex: index).map { result in
            switch result {
            case .success(var option):
                option.router = router
                return .routerOption(option)
            case .failure(let error): return .routerOptionRejected(ifindex: index, error)
            }
        }
    }

    /// NDUSEROPT_SRCADDR: the source address of the advertisement an option came in.
    private static let ndUserOptionSourceAddress = 1

    /// FRA_DSCP (kernel 6.13 and later; the headers here are older): a DSCP selector.
    private static let fraDSCP = 25

    /// The next hops of RTA_MULTIPATH (`struct rtnexthop`: len (u16), flags, hops (u8 each),
    /// ifindex (s32), then the hop's attributes); nil when a hop's length does not cover its
    /// header or leaves the attribute.
    private static func nextHops(_ payload: UnsafeRawBufferPointer, family: AddressFamily) -> [(oif: Int, gateway: String?)]? {
        var hops: [(oif: Int, gateway: String?)] = []
        var offset = 0
        while offset + 8 <= payload.count {
            let length = Int(payload.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            guard length >= 8, offset + length <= payload.count else { return nil }
            var gateway: String?
            let hop = UnsafeRawBufferPointer(rebasing: payload[offset..<(offset + length)])
            _ = NetlinkAttributes.forEach(in: hop, from: 8) { type, value in
                if type == Int(RTA_GATEWAY.rawValue) { gateway = string(value, family: family) }
                return true
            }
            hops.append((Int(hop.loadUnaligned(fromByteOffset: 4, as: Int32.self)), gateway))
            offset += NetlinkAttributes.aligned(length)
        }
        return hops
    }

    private static func string(_ payload: UnsafeRawBufferPointer, family: AddressFamily) -> String? {
        guard let base = payload.baseAddress else { return nil }
        switch family {
        case .ipv4: return RouteLookup.string(family: AF_INET, bytes: base, length: payload.count)
        case .ipv6: return RouteLookup.string(family: AF_INET6, bytes: base, length: payload.count)
        }
    }

    private static func family(_ value: Int32) -> AddressFamily? {
        switch value {
        case AF_INET: return .ipv4
        case AF_INET6: return .ipv6
        default: return nil
        }
    }

    /// RT_SCOPE_* → scope.
    static func scope(_ value: Int32) -> AddressScope {
        switch UInt32(truncatingIfNeeded: value) {
        case RT_SCOPE_UNIVERSE.rawValue: return .global
        case RT_SCOPE_SITE.rawValue: return .site
        case RT_SCOPE_LINK.rawValue: return .link
        default: return .host
        }
    }
}
