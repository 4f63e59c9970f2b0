import CNetlink
import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// Turns rtnetlink messages into `KernelChange`s with libnl's parsers (`nl_msg_parse` →
/// `rtnl_link` / `rtnl_addr` / `rtnl_route`), so no attribute is decoded by hand.
enum NetlinkMessageDecoder {
    /// The context of one `nl_msg_parse` call (capture-free callback + `Unmanaged`).
    private final class Parse {
        let type: Int
        let flags: Int32
        var changes: [KernelChange] = []
        init(type: Int, flags: Int32) { self.type = type; self.flags = flags }
    }

    /// Decodes one message; messages that do not matter (other types, AF_BRIDGE port news) give none.
    static func changes(in message: OpaquePointer) -> [KernelChange] {
        guard let header = nlmsg_hdr(message) else { return [] }
        let type = Int(header.pointee.nlmsg_type)
        switch type {
        case RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR, RTM_NEWROUTE, RTM_DELROUTE: break
        default: return []
        }
        if type == RTM_NEWLINK || type == RTM_DELLINK {
            // A bridge reports its ports with AF_BRIDGE link messages; their RTM_DELLINK means
            // "left the bridge", not "deleted". Read the family from the raw `ifinfomsg`: libnl
            // reports AF_BRIDGE for every link of kind bridge too.
            guard Int(header.pointee.nlmsg_len) >= MemoryLayout<nlmsghdr>.size + MemoryLayout<ifinfomsg>.size,
                  let body = nlmsg_data(header) else { return [] }
            let family = body.assumingMemoryBound(to: ifinfomsg.self).pointee.ifi_family
            guard Int32(family) != AF_BRIDGE else { return [] }
        }
        if type == RTM_NEWROUTE || type == RTM_DELROUTE {
            guard Int(header.pointee.nlmsg_len) >= MemoryLayout<nlmsghdr>.size + MemoryLayout<rtmsg>.size,
                  let body = nlmsg_data(header) else { return [] }
            // Routes of another table than main (the local table's, which every address and every
            // IPv6 link brings) are dropped by the state table anyway: skip libnl's parse of them,
            // which a change with IPv6 on pays several times before its event. A table above 255
            // is only in RTA_TABLE (`rtm_table` says RT_TABLE_COMPAT): those are parsed as before.
            let table = Int32(body.assumingMemoryBound(to: rtmsg.self).pointee.rtm_table)
            guard table == Int32(RT_TABLE_MAIN.rawValue) || table == Int32(RT_TABLE_COMPAT.rawValue)
                    || table == Int32(RT_TABLE_UNSPEC.rawValue) else { return [] }
            // libnl 3.7 loops for ever, allocating, on a next hop of length 0: never hand it one.
            guard multipathIsWellFormed(header) else { return [] }
        }
        let parse = Parse(type: type, flags: Int32(header.pointee.nlmsg_flags))
        let context = Unmanaged.passRetained(parse)
        defer { context.release() }
        _ = nl_msg_parse(message, { object, arg in
            guard let object, let arg else { return }
            let parse = Unmanaged<Parse>.fromOpaque(arg).takeUnretainedValue()
            parse.changes += NetlinkMessageDecoder.decode(object, type: parse.type, flags: parse.flags)
        }, context.toOpaque())
        return parse.changes
    }

    /// Whether every next hop in the route message's RTA_MULTIPATH (if any) has a length that
    /// covers its header and stays inside the attribute. Found by fuzzing: libnl's parser does
    /// not check, and a zero length never advances.
    static func multipathIsWellFormed(_ header: UnsafeMutablePointer<nlmsghdr>) -> Bool {
        let total = Int(header.pointee.nlmsg_len)
        let headerSize = MemoryLayout<nlmsghdr>.size, routeSize = MemoryLayout<rtmsg>.size
        guard total >= headerSize + routeSize else { return true }   // libnl refuses a short one itself
        let bytes = UnsafeRawPointer(header)
        func u16(_ offset: Int) -> Int { Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
        func align(_ n: Int) -> Int { (n + 3) & ~3 }
        var offset = headerSize + align(routeSize)
        while offset + 4 <= total {
            let length = u16(offset), type = u16(offset + 2) & 0x3fff
            guard length >= 4, offset + length <= total else { return true }   // libnl stops at a bad attribute
            if type == Int(RTA_MULTIPATH.rawValue) {
                var hop = offset + 4
                let end = offset + length
                while hop + 8 <= end {
                    let hopLength = u16(hop)
                    guard hopLength >= 8, hop + hopLength <= end else { return false }
                    hop += align(hopLength)
                }
            }
            offset += align(length)
        }
        return true
    }

    static func decode(_ object: OpaquePointer, type: Int, flags: Int32) -> [KernelChange] {
        switch type {
        case RTM_NEWLINK, RTM_DELLINK:
            let index = Int(rtnl_link_get_ifindex(object))
            if type == RTM_DELLINK { return [.linkRemoved(index: index)] }
            let flags = rtnl_link_get_flags(object)
            let facts = LinkFacts(
                index: index,
                name: rtnl_link_get_name(object).map { String(cString: $0) } ?? "if\(index)",
                rtnlKind: rtnl_link_get_type(object).map { String(cString: $0) },
                arpType: Int(rtnl_link_get_arptype(object)),
                up: flags & UInt32(IFF_UP.rawValue) != 0,
                carrier: flags & UInt32(IFF_LOWER_UP.rawValue) != 0,
                loopback: flags & UInt32(IFF_LOOPBACK.rawValue) != 0,
                operstate: LinkFacts.operstateName(Int(rtnl_link_get_operstate(object))))
            return [.link(facts)]
        case RTM_NEWADDR, RTM_DELADDR:
            guard let family = family(rtnl_addr_get_family(object)),
                  let local = rtnl_addr_get_local(object), let text = string(local) else { return [] }
            let addressFlags = rtnl_addr_get_flags(object)
            let address = AddressState(
                ifindex: Int(rtnl_addr_get_ifindex(object)), family: family, address: text,
                prefixLength: Int(rtnl_addr_get_prefixlen(object)), scope: scope(rtnl_addr_get_scope(object)),
                tentative: addressFlags & UInt32(IFA_F_TENTATIVE | IFA_F_DADFAILED) != 0)
            return [type == RTM_NEWADDR ? .addressAdded(address) : .addressRemoved(address)]
        case RTM_NEWROUTE, RTM_DELROUTE:
            guard let family = family(Int32(rtnl_route_get_family(object))) else { return [] }
            // Cached clones (RTM_F_CLONED) are not routes of the table.
            guard rtnl_route_get_flags(object) & UInt32(RTM_F_CLONED) == 0 else { return [] }
            let destination = rtnl_route_get_dst(object)
            let prefixLength = destination.map { Int(nl_addr_get_prefixlen($0)) } ?? 0
            let destinationText = prefixLength == 0 ? nil : destination.flatMap(string)
            var hops: [(oif: Int, gateway: String?)] = []
            for i in 0..<max(0, rtnl_route_get_nnexthops(object)) {
                guard let hop = rtnl_route_nexthop_n(object, i) else { continue }
                hops.append((Int(rtnl_route_nh_get_ifindex(hop)), rtnl_route_nh_get_gateway(hop).flatMap(string)))
            }
            if hops.isEmpty { hops = [(0, nil)] }
            let routeType = RouteLookup.routeType(rtm: rtnl_route_get_type(object))
            return hops.map { hop in
                let route = RouteState(family: family, table: rtnl_route_get_table(object), destination: destinationText,
                                       prefixLength: prefixLength, gateway: hop.gateway, oif: hop.oif,
                                       metric: rtnl_route_get_priority(object), type: routeType)
                return type == RTM_NEWROUTE ? .routeAdded(route, replace: flags & Int32(NLM_F_REPLACE) != 0) : .routeRemoved(route)
            }
        default:
            return []
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
    private static func scope(_ value: Int32) -> AddressScope {
        switch UInt32(truncatingIfNeeded: value) {
        case RT_SCOPE_UNIVERSE.rawValue: return .global
        case RT_SCOPE_SITE.rawValue: return .site
        case RT_SCOPE_LINK.rawValue: return .link
        default: return .host
        }
    }

    /// The address of an `nl_addr` in text, without prefix length.
    static func string(_ address: OpaquePointer) -> String? {
        guard let bytes = nl_addr_get_binary_addr(address) else { return nil }
        return RouteLookup.string(family: nl_addr_get_family(address), bytes: bytes, length: Int(nl_addr_get_len(address)))
    }
}
