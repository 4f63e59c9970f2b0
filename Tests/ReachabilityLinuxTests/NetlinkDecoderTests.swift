import CNetlink
import Foundation
import ReachabilityCore
import Synchronization
import Testing
import TestSupport
@testable import ReachabilityLinux

/// What libnl's parsers (`nl_msg_parse` → `rtnl_link`, `rtnl_addr`, `rtnl_route`) make of a
/// message: the reference the in-place decoder is held to. This is how reachd decoded messages
/// before it read them itself.
enum LibnlReferenceDecoder {
    private final class Parse {
        let type: Int
        let flags: Int32
        var changes: [KernelChange] = []
        init(type: Int, flags: Int32) { self.type = type; self.flags = flags }
    }

    static func changes(in message: OpaquePointer) -> [KernelChange] {
        guard let header = nlmsg_hdr(message) else { return [] }
        let type = Int(header.pointee.nlmsg_type)
        switch type {
        case RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR, RTM_NEWROUTE, RTM_DELROUTE: break
        default: return []
        }
        let body = nlmsg_data(header)
        if type == RTM_NEWLINK || type == RTM_DELLINK,
           Int32(body?.assumingMemoryBound(to: ifinfomsg.self).pointee.ifi_family ?? 0) == AF_BRIDGE { return [] }
        if type == RTM_NEWROUTE || type == RTM_DELROUTE {
            // The local table is left out; every other is kept.
            let table = Int32(body?.assumingMemoryBound(to: rtmsg.self).pointee.rtm_table ?? 0)
            guard table != Int32(RT_TABLE_LOCAL.rawValue) else { return [] }
        }
        let parse = Parse(type: type, flags: Int32(header.pointee.nlmsg_flags))
        let context = Unmanaged.passRetained(parse)
        defer { context.release() }
        _ = nl_msg_parse(message, { object, arg in
            guard let object, let arg else { return }
            let parse = Unmanaged<Parse>.fromOpaque(arg).takeUnretainedValue()
            parse.changes += LibnlReferenceDecoder.decode(object, type: parse.type, flags: parse.flags)
        }, context.toOpaque())
        return parse.changes
    }

    private static func decode(_ object: OpaquePointer, type: Int, flags: Int32) -> [KernelChange] {
        switch type {
        case RTM_NEWLINK, RTM_DELLINK:
            let index = Int(rtnl_link_get_ifindex(object))
            if type == RTM_DELLINK { return [.linkRemoved(index: index)] }
            let flags = rtnl_link_get_flags(object)
            return [.link(LinkFacts(index: index, name: rtnl_link_get_name(object).map { String(cString: $0) } ?? "if\(index)",
                                    rtnlKind: rtnl_link_get_type(object).map { String(cString: $0) },
                                    arpType: Int(rtnl_link_get_arptype(object)),
                                    up: flags & UInt32(IFF_UP.rawValue) != 0, carrier: flags & UInt32(IFF_LOWER_UP.rawValue) != 0,
                                    loopback: flags & UInt32(IFF_LOOPBACK.rawValue) != 0,
                                    operstate: LinkFacts.operstateName(Int(rtnl_link_get_operstate(object))),
                                    group: rtnl_link_get_group(object)))]
        case RTM_NEWADDR, RTM_DELADDR:
            guard let family = family(rtnl_addr_get_family(object)), let local = rtnl_addr_get_local(object),
                  let text = string(local) else { return [] }
            let address = AddressState(ifindex: Int(rtnl_addr_get_ifindex(object)), family: family, address: text,
                                       prefixLength: Int(rtnl_addr_get_prefixlen(object)), scope: NetlinkMessageDecoder.scope(rtnl_addr_get_scope(object)),
                                       tentative: rtnl_addr_get_flags(object) & UInt32(IFA_F_TENTATIVE | IFA_F_DADFAILED) != 0)
            return [type == RTM_NEWADDR ? .addressAdded(address) : .addressRemoved(address)]
        case RTM_NEWROUTE, RTM_DELROUTE:
            guard let family = family(Int32(rtnl_route_get_family(object))),
                  rtnl_route_get_flags(object) & UInt32(RTM_F_CLONED) == 0,
                  rtnl_route_get_table(object) != RT_TABLE_LOCAL.rawValue else { return [] }
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
        value == AF_INET ? .ipv4 : value == AF_INET6 ? .ipv6 : nil
    }

    private static func string(_ address: OpaquePointer) -> String? {
        guard let bytes = nl_addr_get_binary_addr(address) else { return nil }
        return RouteLookup.string(family: nl_addr_get_family(address), bytes: bytes, length: Int(nl_addr_get_len(address)))
    }
}

extension SystemTests {
/// The in-place decoder against libnl's, message by message, on what a real kernel sends: dumps
/// and notifications of links of several kinds (veth, bridge and its ports, macvlan, vxlan, tun),
/// IPv4 addresses with and without a peer, IPv6 addresses tentative and not, and routes of every
/// type, with gateways, metrics, several next hops, in the main table and in others.
@Suite struct NetlinkDecoderTests {
    /// Every message decoded both ways; the pairs that differ, and how many messages there were.
    final class Comparison: @unchecked Sendable {
        let state = Mutex((messages: 0, changes: 0, types: Set<Int>(), mismatches: [String]()))
        /// A message of a dump, as libnl received it.
        func compare(_ message: OpaquePointer) {
            let ours = NetlinkMessageDecoder.changes(in: message)
            let reference = LibnlReferenceDecoder.changes(in: message)
            record(type: Int(nlmsg_hdr(message)?.pointee.nlmsg_type ?? 0), ours: ours, reference: reference)
        }

        /// A notification, as the monitor's receive hands it on: libnl's decoder gets a copy
        /// converted to an `nl_msg`, as its own receive would have made.
        func compare(_ message: UnsafeRawBufferPointer) {
            let ours = NetlinkMessageDecoder.changes(in: message)
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: message.count, alignment: 8)
            defer { copy.deallocate() }
            copy.copyMemory(from: message)
            guard let converted = copy.baseAddress.flatMap({ nlmsg_convert($0.assumingMemoryBound(to: nlmsghdr.self)) }) else {
                Issue.record("nlmsg_convert failed")
                return
            }
            defer { nlmsg_free(converted) }
            nlmsg_set_proto(converted, NETLINK_ROUTE)
            let reference = LibnlReferenceDecoder.changes(in: converted)
            record(type: Int(copy.load(fromByteOffset: 4, as: UInt16.self)), ours: ours, reference: reference)
        }

        private func record(type: Int, ours: [KernelChange], reference: [KernelChange]) {
            state.withLock { state in
                state.messages += 1
                state.changes += ours.count
                if !ours.isEmpty { state.types.insert(type) }
                if ours != reference { state.mismatches.append("type \(type): ours \(ours), libnl \(reference)") }
            }
        }
    }

    static func configure(_ ns: TestNamespace) throws {
        try ns.ip("link add ve0 type veth peer name ve1")
        try ns.ip("link add br0 type bridge")
        try ns.ip("link set br0 group 7")
        try ns.ip("link set ve1 master br0")
        try ns.ip("link add mv0 link ve0 type macvlan mode bridge")
        try ns.ip("link add vx0 type vxlan id 42 dstport 4789 local 10.81.0.1 dev ve0")
        try ns.ip("tuntap add dev tun0 mode tun")
        for link in ["ve0", "ve1", "br0", "mv0", "vx0", "tun0"] { try ns.ip("link set \(link) up") }
        try ns.ip("addr add 10.81.0.1/24 dev ve0")
        try ns.ip("addr add 10.82.0.1/32 peer 10.82.0.2/32 dev tun0")
        try ns.ip("addr add 10.83.0.1/16 dev br0")
        try ns.ip("-6 addr add 2001:db8:81::1/64 dev ve0 nodad")
        try ns.ip("-6 addr add 2001:db8:82::1/64 dev mv0")
        try ns.ip("route add default via 10.81.0.254 dev ve0 metric 50")
        try ns.ip("route add 192.0.2.0/24 nexthop via 10.81.0.2 dev ve0 weight 1 nexthop via 10.83.0.2 dev br0 weight 2")
        try ns.ip("route add 198.51.100.0/24 via 10.83.0.9 table 100")
        try ns.ip("route add 198.51.101.0/24 via 10.83.0.9 table 1000")
        try ns.ip("route add blackhole 198.51.102.0/24")
        try ns.ip("route add unreachable 198.51.103.0/24 metric 7")
        try ns.ip("-6 route add default via 2001:db8:81::fe dev ve0 metric 1024")
        try ns.ip("-6 route add 2001:db8:99::/48 nexthop via 2001:db8:81::2 dev ve0 nexthop via 2001:db8:81::3 dev ve0")
    }

    @Test(.needsRoot()) func decodesWhatLibnlDecodesFromARealKernel() throws {
        let ns = try TestNamespace(tag: "d")
        defer { ns.destroy() }
        let comparison = Comparison()

        // Notifications: everything the namespace goes through, from an empty start to its
        // dismantling (new and deleted links, addresses, routes).
        let listener = try NetworkNamespace.run(in: ns.name) {
            let socket = try NetlinkSocket()
            try socket.setReceiveBufferSize(4 << 20)
            try socket.addMemberships([RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE])
            try socket.setNonBlocking()
            return socket
        }
        try Self.configure(ns)
        // Dumps of the configured namespace.
        try NetworkNamespace.run(in: ns.name) {
            let socket = try NetlinkSocket { comparison.compare($0) }
            try socket.setReceiveBufferSize(1 << 20)
            for type in [RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE] { try socket.dump(Int32(type)) }
        }
        try ns.ip("route del 192.0.2.0/24")
        try ns.ip("addr del 10.82.0.1/32 peer 10.82.0.2/32 dev tun0")
        try ns.ip("-6 addr del 2001:db8:81::1/64 dev ve0")
        try ns.ip("link set ve1 nomaster")
        try ns.ip("link set ve0 down")
        try ns.ip("link del vx0")
        try ns.ip("link del ve0")
        var drained = false
        while !drained {
            switch listener.receive({ comparison.compare($0) }) {
            case .received: continue
            case .drained: drained = true
            case .overrun, .failed, .foreign: Issue.record("the listener lost messages"); drained = true
            }
        }

        let result = comparison.state.withLock { $0 }
        #expect(result.mismatches.isEmpty, "\(result.mismatches.joined(separator: "\n"))")
        // It saw all six kinds, and plenty of each.
        #expect(result.types == Set([RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR, RTM_NEWROUTE, RTM_DELROUTE]))
        #expect(result.messages > 60 && result.changes > 40, "\(result.messages) messages, \(result.changes) changes")
    }
}
}

/// The decoder on bytes no kernel sends: truncated headers and attributes, lengths that point
/// past the end, next hops of length 0. It returns, without reading outside the message.
@Suite struct NetlinkDecoderBoundsTests {
    static func message(type: Int, body: [UInt8], attributes: [(Int, [UInt8])], lengthDelta: Int = 0) -> [UInt8] {
        var payload = body
        for (type, value) in attributes {
            let length = 4 + value.count
            payload += [UInt8(length & 0xff), UInt8(length >> 8), UInt8(type & 0xff), UInt8(type >> 8)] + value
            payload += [UInt8](repeating: 0, count: NetlinkAttributes.aligned(length) - length)
        }
        let total = 16 + payload.count + lengthDelta
        let header: [UInt8] = [UInt8(total & 0xff), UInt8((total >> 8) & 0xff), 0, 0, UInt8(type), 0, 0, 0] + [UInt8](repeating: 0, count: 8)
        return header + payload
    }

    static func decode(_ bytes: [UInt8]) -> [KernelChange] {
        bytes.withUnsafeBytes { NetlinkMessageDecoder.changes(in: $0) }
    }

    @Test func aLinkWithItsNameAndKind() {
        let body: [UInt8] = [0, 0, 1, 0, 7, 0, 0, 0] + [0x43, 0x00, 0x01, 0x00] + [0, 0, 0, 0]   // up, running, lower-up
        let kind: [UInt8] = [9, 0, 1, 0] + Array("veth".utf8) + [0, 0, 0, 0]
        let bytes = Self.message(type: RTM_NEWLINK, body: body,
                                 attributes: [(Int(IFLA_IFNAME), Array("eth7".utf8) + [0]), (Int(IFLA_OPERSTATE), [6]),
                                              (Int(IFLA_LINKINFO), kind)])
        #expect(Self.decode(bytes) == [.link(LinkFacts(index: 7, name: "eth7", rtnlKind: "veth", arpType: 1, up: true, carrier: true,
                                                       loopback: false, operstate: LinkFacts.operstateName(6)))])
    }

    /// RTM_NEWNDUSEROPT: `struct nduseroptmsg`, the ND options, NDUSEROPT_SRCADDR. Each option
    /// understood is a change; a malformed one is a rejection naming why; the header is checked.
    @Test func routerAdvertisementOptions() {
        func message(family: UInt8 = UInt8(AF_INET6), icmpType: UInt8 = 134, index: Int32 = 2, options: [UInt8],
                     optionsLength: Int? = nil) -> [UInt8] {
            let length = optionsLength ?? options.count
            let header: [UInt8] = [family, 0, UInt8(length & 0xff), UInt8(length >> 8)]
                + withUnsafeBytes(of: index.littleEndian) { Array($0) } + [icmpType, 0, 0, 0, 0, 0, 0, 0]
            return Self.message(type: RTM_NEWNDUSEROPT, body: header + options, attributes: [(1, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1])])
        }
        let rdnss = RouterAdvertiser.rdnss(["2001:db8::53"], lifetime: 600)
        let portal = RouterAdvertiser.captivePortal("https://10.0.0.1:8443/capport")
        // Each option names the router it came from (NDUSEROPT_SRCADDR): the URI ages with its advertisements.
        #expect(Self.decode(message(options: rdnss + portal)) == [
            .routerOption(RouterOption(ifindex: 2, content: .dnsServers(["2001:db8::53"]), lifetime: 600, router: "fe80::1")),
            .routerOption(RouterOption(ifindex: 2, content: .captivePortal("https://10.0.0.1:8443/capport"), lifetime: nil,
                                       router: "fe80::1")),
        ])
        // A malformed option: rejected with why, the good one after it still read.
        let half = RouterAdvertiser.option(25, [0, 0, 0, 0, 0, 60] + [UInt8](repeating: 0x20, count: 8))
        let decoded = Self.decode(message(options: half + rdnss))
        #expect(decoded.count == 2)
        if case .routerOptionRejected(let index, let error) = decoded.first {
            #expect(index == 2 && error.type == 25 && error.problem.contains("not 8 + 16 per address"))
        } else {
            Issue.record("expected a rejection, got \(decoded)")
        }
        // Options longer than the message: a rejection; not IPv6, not a router advertisement, no index: nothing.
        let long = Self.decode(message(options: rdnss, optionsLength: 400))
        #expect(long.count == 1 && { if case .routerOptionRejected = long[0] { return true } else { return false } }())
        #expect(Self.decode(message(family: UInt8(AF_INET), options: rdnss)).isEmpty)
        #expect(Self.decode(message(icmpType: 137, options: rdnss)).isEmpty)
        #expect(Self.decode(message(index: 0, options: rdnss)).isEmpty)
        // Every prefix of a good message: no crash, no read outside it.
        let good = message(options: rdnss + portal)
        for length in 0..<good.count { _ = Self.decode(Array(good.prefix(length))) }
    }

    @Test func malformedInputGivesNothingOrWhatIsInside() {
        let link: [UInt8] = [0, 0, 1, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
        // No name: nothing (libnl refuses it too).
        #expect(Self.decode(Self.message(type: RTM_NEWLINK, body: link, attributes: [])).isEmpty)
        // A header shorter than ifinfomsg.
        #expect(Self.decode(Self.message(type: RTM_NEWLINK, body: Array(link.prefix(8)), attributes: [])).isEmpty)
        // nlmsg_len beyond the buffer, and below the header.
        let named = Self.message(type: RTM_NEWLINK, body: link, attributes: [(Int(IFLA_IFNAME), Array("x".utf8) + [0])], lengthDelta: 400)
        #expect(Self.decode(named).count == 1)
        #expect(Self.decode(Self.message(type: RTM_NEWLINK, body: link, attributes: [], lengthDelta: -20)).isEmpty)
        // An attribute whose length points past the end stops the walk.
        var cut = Self.message(type: RTM_NEWLINK, body: link, attributes: [(Int(IFLA_IFNAME), Array("abc".utf8) + [0])])
        cut[32] = 200
        #expect(Self.decode(cut).isEmpty)
        // A next hop of length 0 (which made libnl 3.7 loop for ever): the route is dropped.
        let route: [UInt8] = [UInt8(AF_INET), 24, 0, 0, UInt8(RT_TABLE_MAIN.rawValue), 3, 0, 1, 0, 0, 0, 0]
        let badHop: [UInt8] = [0, 0, 0, 0, 2, 0, 0, 0]
        #expect(Self.decode(Self.message(type: RTM_NEWROUTE, body: route,
                                         attributes: [(Int(RTA_DST.rawValue), [192, 0, 2, 0]), (Int(RTA_MULTIPATH.rawValue), badHop)])).isEmpty)
        // Every prefix of a good message: no crash, no read outside it.
        let good = Self.message(type: RTM_NEWROUTE, body: route,
                                attributes: [(Int(RTA_DST.rawValue), [192, 0, 2, 0]), (Int(RTA_OIF.rawValue), [2, 0, 0, 0]),
                                             (Int(RTA_GATEWAY.rawValue), [10, 0, 0, 1])])
        #expect(Self.decode(good).count == 1)
        for length in 0..<good.count { _ = Self.decode(Array(good.prefix(length))) }
        // At an odd address: the same, read without alignment.
        let unaligned = ([0] + good).withUnsafeBytes { NetlinkMessageDecoder.changes(in: UnsafeRawBufferPointer(rebasing: $0[1...])) }
        #expect(unaligned == Self.decode(good))
    }
}
