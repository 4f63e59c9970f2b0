import CNetlink
import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
import ReachabilitySystem
#endif

/// A libnl or socket failure of the route look-up: the operation and libnl's error text.
public struct RouteLookupError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let message: String
    public var description: String { "route look-up: \(operation): \(message)" }

    init(_ operation: String, libnl code: Int32) {
        self.operation = operation
        message = String(cString: nl_geterror(code))
    }

    init(_ operation: String, message: String) {
        self.operation = operation; self.message = message
    }
}

/// An errno the kernel answered a netlink request with.
public struct KernelError: Error, CustomStringConvertible, Sendable {
    public let errno: Errno
    /// The error text alone: `Network is unreachable`, `Permission denied`, …
    public var description: String { errno.text }
}

/// `ip route get ADDRESS` as a library: one RTM_GETROUTE request for a single destination,
/// answered by the kernel's FIB exactly as it would route a packet (policy rules, more specific
/// routes, blackholes), without sending anything. The output link's name and flags are read with
/// an RTM_GETLINK request on the same socket.
///
/// The netlink socket is created inside `networkNamespace` (tests) and asks that namespace's
/// kernel from any thread afterwards. A `RouteLookup` is used by one thread at a time.
public final class RouteLookup {
    let socket: OpaquePointer

    /// Opens the NETLINK_ROUTE socket (`nl_socket_alloc`, `nl_connect`) inside `networkNamespace`.
    public init(networkNamespace: String? = nil) throws {
        socket = try NetworkNamespace.run(in: networkNamespace) { () throws -> OpaquePointer in
            guard let socket = nl_socket_alloc() else { throw RouteLookupError("nl_socket_alloc", message: "out of memory") }
            let rc = nl_connect(socket, NETLINK_ROUTE)
            guard rc == 0 else { nl_socket_free(socket); throw RouteLookupError("nl_connect", libnl: rc) }
            return socket
        }
        // Requests carry no NLM_F_ACK: the kernel answers with the route or with an error.
        nl_socket_disable_auto_ack(socket)
        // The kernel answers synchronously; the timeout only guards against a lost reply.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        _ = setsockopt(nl_socket_get_fd(socket), SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { nl_socket_free(socket) }

    /// Looks up the route to `address` (an IPv4 or IPv6 literal). A refused look-up (no route,
    /// unreachable/prohibit/blackhole route) is a result with that route type and the kernel's
    /// error text, not a thrown error; only a failing socket throws.
    /// The result names the address in its canonical form (`inet_ntop`: `2001:db8::1`, not `2001:DB8:0::1`).
    ///
    /// With `tcpPort`, the look-up is for TCP to that port (RTA_IP_PROTO, RTA_DPORT), so policy
    /// routing by destination port (`ip rule add dport …`) is taken into account; with `uid`, for
    /// a socket of that user (RTA_UID; else the caller's), for `uidrange` rules; with `mark`, for
    /// a packet with that mark (RTA_MARK); with `source`, for a socket bound to that local
    /// address (RTA_SRC), for `from` rules. With `resolveLink` false the output link's name and
    /// flags are not asked for (`link` stays nil): one request instead of two.
    public func lookup(_ text: String, tcpPort: Int? = nil, uid: UInt32? = nil, mark: UInt32? = nil,
                       source: String? = nil, resolveLink: Bool = true) throws -> RouteLookupResult {
        guard let ip = IPAddress(text) else { throw RouteLookupError("lookup", message: "\(text) is not an IP address") }
        let family: AddressFamily
        switch ip.family {
        case .ipv4: family = .ipv4
        case .ipv6: family = .ipv6
        }
        let bytes = ip.bytes
        let address = ip.description

        var request = rtmsg()
        request.rtm_family = UInt8(family == .ipv4 ? AF_INET : AF_INET6)
        request.rtm_dst_len = UInt8(bytes.count * 8)
        var attributes: [(Int32, [UInt8])] = [(Int32(RTA_DST.rawValue), bytes)]
        if let tcpPort, let port = UInt16(exactly: tcpPort) {
            attributes.append((Int32(RTA_IP_PROTO.rawValue), [UInt8(IPPROTO_TCP)]))
            // Network byte order, as the kernel's fib rules compare it.
            attributes.append((Int32(RTA_DPORT.rawValue), [UInt8(port >> 8), UInt8(port & 0xff)]))
        }
        func native(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        if let source {
            guard let from = IPAddress(source), from.family == ip.family else {
                throw RouteLookupError("lookup", message: "\(source) is not an address of the family of \(text)")
            }
            request.rtm_src_len = UInt8(from.bytes.count * 8)
            attributes.append((Int32(RTA_SRC.rawValue), from.bytes))
        }
        if let uid { attributes.append((Int32(RTA_UID.rawValue), native(uid))) }
        if let mark { attributes.append((Int32(RTA_MARK.rawValue), native(mark))) }
        let reply = try transact(type: Int32(RTM_GETROUTE), header: &request, attributes: attributes,
                                 replyType: UInt16(RTM_NEWROUTE), parse: Self.parseRoute)
        switch reply {
        case let .failure(error):
            return RouteLookupResult(address: address, family: family, type: Self.routeType(forLookupErrno: error.errno),
                                     error: error.description)
        case var .success(route):
            route.address = address
            route.family = family
            if resolveLink, let index = route.outputInterfaceIndex, route.type != RouteType.blackhole,
               route.type != RouteType.unreachable, route.type != RouteType.prohibit {
                route.link = try link(index: index)
            }
            return route
        }
    }

    /// The name and IFF_UP/IFF_LOWER_UP of link `index` (RTM_GETLINK); nil when it is gone.
    public func link(index: Int) throws -> RouteLookupResult.Link? {
        var request = ifinfomsg()
        request.ifi_family = UInt8(AF_UNSPEC)
        request.ifi_index = Int32(index)
        let reply = try transact(type: Int32(RTM_GETLINK), header: &request, attributes: [],
                                 replyType: UInt16(RTM_NEWLINK), parse: Self.parseLink)
        switch reply {
        case .failure: return nil
        case let .success(link): return link
        }
    }

    /// The route type a refused look-up's errno stands for, as the kernel's FIB maps them
    /// (fib_props: unreachable → EHOSTUNREACH, prohibit → EACCES, blackhole → EINVAL, no route → ENETUNREACH).
    static func routeType(forLookupErrno errno: Errno) -> RouteType {
        switch errno {
        case .permissionDenied, .notPermitted: return .prohibit
        case .invalidArgument: return .blackhole
        default: return .unreachable
        }
    }

    // MARK: - One request, one reply

    /// Sends one request (`nlmsg_alloc_simple`, `nlmsg_append`, `nla_put`, `nl_send_auto`) and
    /// reads until its reply (`nl_recv`): the parsed reply, or the errno of an NLMSG_ERROR.
    private func transact<Header: BitwiseCopyable, T>(type: Int32, header: inout Header, attributes: [(Int32, [UInt8])], replyType: UInt16,
                                     parse: (UnsafeMutablePointer<nlmsghdr>) -> T?) throws -> Result<T, KernelError> {
        guard let message = nlmsg_alloc_simple(type, NLM_F_REQUEST) else {
            throw RouteLookupError("nlmsg_alloc_simple", message: "out of memory")
        }
        defer { nlmsg_free(message) }
        var rc = withUnsafeMutableBytes(of: &header) { nlmsg_append(message, $0.baseAddress, $0.count, Int32(NLMSG_ALIGNTO)) }
        guard rc == 0 else { throw RouteLookupError("nlmsg_append", libnl: rc) }
        for (attribute, data) in attributes {
            rc = data.withUnsafeBytes { nla_put(message, attribute, Int32($0.count), $0.baseAddress) }
            guard rc == 0 else { throw RouteLookupError("nla_put", libnl: rc) }
        }
        rc = nl_send_auto(socket, message)
        guard rc >= 0 else { throw RouteLookupError("nl_send_auto", libnl: rc) }
        let sequence = nlmsg_hdr(message).pointee.nlmsg_seq

        while true {
            var peer = sockaddr_nl()
            var buffer: UnsafeMutablePointer<UInt8>?
            let length = nl_recv(socket, &peer, &buffer, nil)
            guard length > 0, let buffer else {
                free(buffer)
                if length == 0 { throw RouteLookupError("nl_recv", message: "no reply from the kernel") }
                throw RouteLookupError("nl_recv", libnl: length)
            }
            defer { free(buffer) }
            var remaining = length
            var header: UnsafeMutablePointer<nlmsghdr>? = UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: nlmsghdr.self)
            while let current = header, nlmsg_ok(current, remaining) != 0 {
                defer { header = nlmsg_next(current, &remaining) }
                // A reply to an earlier request that timed out is skipped.
                guard current.pointee.nlmsg_seq == sequence else { continue }
                if current.pointee.nlmsg_type == UInt16(NLMSG_ERROR) {
                    let error = nlmsg_data(current).assumingMemoryBound(to: nlmsgerr.self).pointee.error
                    return .failure(KernelError(errno: Errno(error == 0 ? EIO : -error, call: "netlink")))
                }
                if current.pointee.nlmsg_type == replyType {
                    guard let value = parse(current) else {
                        throw RouteLookupError("parse", message: "malformed reply of type \(replyType)")
                    }
                    return .success(value)
                }
            }
        }
    }

    // MARK: - Parsing

    private static func attributes(_ header: UnsafeMutablePointer<nlmsghdr>, headerSize: Int, max: Int) -> [UnsafeMutablePointer<nlattr>?]? {
        var table = [UnsafeMutablePointer<nlattr>?](repeating: nil, count: max + 1)
        let rc = table.withUnsafeMutableBufferPointer { nlmsg_parse(header, Int32(headerSize), $0.baseAddress, Int32(max), nil) }
        return rc == 0 ? table : nil
    }

    private static func parseRoute(_ header: UnsafeMutablePointer<nlmsghdr>) -> RouteLookupResult? {
        let message = nlmsg_data(header).assumingMemoryBound(to: rtmsg.self).pointee
        guard let table = attributes(header, headerSize: MemoryLayout<rtmsg>.size, max: Int(__RTA_MAX.rawValue) - 1) else { return nil }
        let family: AddressFamily = Int32(message.rtm_family) == AF_INET6 ? .ipv6 : .ipv4
        func address(_ attribute: rtattr_type_t, family: Int32) -> String? {
            guard let nla = table[Int(attribute.rawValue)] else { return nil }
            guard let data = nla_data(nla) else { return nil }
            return Self.string(family: family, bytes: data, length: Int(nla_len(nla)))
        }
        let addressFamily = Int32(message.rtm_family)
        var gateway = address(RTA_GATEWAY, family: addressFamily)
        if gateway == nil, let via = table[Int(RTA_VIA.rawValue)], nla_len(via) > 2 {
            // struct rtvia: a family, then the address (an IPv4 route via an IPv6 next hop).
            guard let data = nla_data(via) else { return nil }
            let viaFamily = Int32(data.load(as: UInt16.self))
            gateway = Self.string(family: viaFamily, bytes: data + 2, length: Int(nla_len(via)) - 2)
        }
        let oif = table[Int(RTA_OIF.rawValue)].map { Int(nla_get_u32($0)) }
        return RouteLookupResult(address: "", family: family, type: routeType(rtm: message.rtm_type),
                                 outputInterfaceIndex: oif, gateway: gateway,
                                 preferredSource: address(RTA_PREFSRC, family: addressFamily))
    }

    private static func parseLink(_ header: UnsafeMutablePointer<nlmsghdr>) -> RouteLookupResult.Link? {
        let message = nlmsg_data(header).assumingMemoryBound(to: ifinfomsg.self).pointee
        guard let table = attributes(header, headerSize: MemoryLayout<ifinfomsg>.size, max: Int(__IFLA_MAX) - 1),
              let nameAttribute = table[Int(IFLA_IFNAME)] else { return nil }
        guard let data = nla_data(nameAttribute) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: data, count: Int(nla_len(nameAttribute)))
        let name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        return RouteLookupResult.Link(name: name, up: message.ifi_flags & UInt32(IFF_UP.rawValue) != 0,
                                      carrier: message.ifi_flags & UInt32(IFF_LOWER_UP.rawValue) != 0)
    }

    /// RTN_* to `RouteType` (of a look-up's reply and of a route the monitor sees).
    static func routeType(rtm: UInt8) -> RouteType {
        switch Int(rtm) {
        case Int(RTN_UNICAST): return .unicast
        case Int(RTN_LOCAL): return .local
        case Int(RTN_BROADCAST): return .broadcast
        case Int(RTN_ANYCAST): return .anycast
        case Int(RTN_MULTICAST): return .multicast
        case Int(RTN_BLACKHOLE): return .blackhole
        case Int(RTN_UNREACHABLE): return .unreachable
        case Int(RTN_PROHIBIT): return .prohibit
        case Int(RTN_THROW): return .throwRoute
        default: return .other
        }
    }

    /// The text of an address attribute; nil for another family or a wrong length.
    static func string(family: Int32, bytes: UnsafeRawPointer, length: Int) -> String? {
        let expected = family == AF_INET ? 4 : family == AF_INET6 ? 16 : -1
        guard length == expected else { return nil }
        return IPAddress.text(family: family, bytes: bytes)
    }
}
