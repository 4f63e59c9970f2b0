import FoundationEssentials

// The wire types of `io.reachd.Reachability.Check` (docs/protocol.md). As in Status.swift, every
// field is encoded, `null` for an absent optional, so strict varlink clients can validate them.

/// The kernel's route to one address of a checked host (varlink type `Route`).
public struct Route: Codable, Equatable, Hashable, Sendable {
    /// The destination address (`93.184.216.34`, `2001:db8::1`).
    public var address: String
    /// The output interface, nil when the kernel has no route (unreachable, prohibit, …).
    public var interface: String?
    /// The output interface's kind (`ethernet`, `wifi`, `vpn`, …), nil when unknown.
    public var kind: String?
    /// The next hop, nil when the destination is on-link or local.
    public var gateway: String?
    /// The source address the kernel would use (RTA_PREFSRC).
    public var source: String?
    /// The route type (RTN_* name: `unicast`, `local`, `blackhole`, `unreachable`, `prohibit`, `throw`, …).
    public var type: String

    public init(address: String, interface: String?, kind: String?, gateway: String?, source: String?, type: String) {
        self.address = address; self.interface = interface; self.kind = kind
        self.gateway = gateway; self.source = source; self.type = type
    }

    enum CodingKeys: String, CodingKey { case address, interface, kind, gateway, source, type }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(address, forKey: .address); try c.encode(interface, forKey: .interface)
        try c.encode(kind, forKey: .kind); try c.encode(gateway, forKey: .gateway)
        try c.encode(source, forKey: .source); try c.encode(type, forKey: .type)
    }
}

/// The outcome of a TCP connect to the checked host (varlink type `TCPCheck`).
public struct TCPCheck: Codable, Equatable, Hashable, Sendable {
    public var port: Int
    public var connected: Bool
    /// Time from `connect(2)` to the established connection, when it connected.
    public var rttMs: Double?
    /// Why it did not connect (`connection refused`, `timed out after 5 s`, …).
    public var error: String?

    public init(port: Int, connected: Bool, rttMs: Double? = nil, error: String? = nil) {
        self.port = port; self.connected = connected; self.rttMs = rttMs; self.error = error
    }

    /// The `error` of a connect the host refused (strerror(ECONNREFUSED)).
    public static let refusedError = "Connection refused"

    /// The host answered with a refusal: it is reachable, the port is closed.
    public var portClosed: Bool { !connected && error == Self.refusedError }

    enum CodingKeys: String, CodingKey { case port, connected, rttMs, error }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(port, forKey: .port); try c.encode(connected, forKey: .connected)
        try c.encode(rttMs, forKey: .rttMs); try c.encode(error, forKey: .error)
    }
}

/// The answer to "can this machine reach HOST now, and how?" (varlink type `HostCheck`).
///
/// `addresses` and `routes` list every address of the host; the address the answer describes
/// (the one the TCP check connected to, else the first reachable one, else the first) comes
/// first, the others follow in the resolver's order.
public struct HostCheck: Codable, Equatable, Sendable {
    /// The host as asked.
    public var host: String
    public var addresses: [String]
    /// A usable route to the host exists and, when a port was given, the host answered the TCP
    /// connect (connected, or refused: the port is closed).
    public var reachable: Bool
    /// The `NetworkStatus` raw value of the path to the host (`ethernet`, `wifi`, `wwan4G`, …;
    /// `notReachable` without a usable route).
    public var status: String
    /// `ReachabilityFlag` raw values (`reachable`, `isDirect`, `isLocalAddress`, …).
    public var flags: [String]
    public var routes: [Route]
    public var tcp: TCPCheck?

    public init(host: String, addresses: [String], reachable: Bool, status: String, flags: [String],
                routes: [Route], tcp: TCPCheck?) {
        self.host = host; self.addresses = addresses; self.reachable = reachable; self.status = status
        self.flags = flags; self.routes = routes; self.tcp = tcp
    }

    /// The flags that this version knows, in wire order; unknown names from a newer daemon are skipped.
    public var reachabilityFlags: [ReachabilityFlag] { flags.compactMap(ReachabilityFlag.init(rawValue:)) }

    /// The route the answer describes (the first), if any.
    public var primaryRoute: Route? { routes.first }

    enum CodingKeys: String, CodingKey { case host, addresses, reachable, status, flags, routes, tcp }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(host, forKey: .host); try c.encode(addresses, forKey: .addresses)
        try c.encode(reachable, forKey: .reachable); try c.encode(status, forKey: .status)
        try c.encode(flags, forKey: .flags); try c.encode(routes, forKey: .routes)
        try c.encode(tcp, forKey: .tcp)
    }
}

extension HostCheck {
    /// The addresses a client connects to for `Check(host:, port:)`, in order: those with a usable
    /// route (the answer's first), then the others whose route could carry traffic. None when the
    /// host is not reachable.
    public var tcpCandidates: [String] {
        guard reachable else { return [] }
        return routes.enumerated().filter { index, route in
            index == 0 || ((route.type == "unicast" || route.type == "local") && route.interface != nil)
        }.map(\.element.address)
    }

    /// The answer with the TCP connect a client made to `address` (nil: not attempted). A host
    /// that answered (connected or refused) stays reachable and comes first; one that did not
    /// answer is not reachable. The path (`status`, routes) stays as the daemon judged it.
    public func withTCP(_ check: TCPCheck, address: String?) -> HostCheck {
        var copy = self
        copy.tcp = check
        let answered = check.connected || check.portClosed
        if answered, let address, let index = copy.addresses.firstIndex(of: address), index > 0 {
            copy.addresses.insert(copy.addresses.remove(at: index), at: 0)
            if let route = copy.routes.firstIndex(where: { $0.address == address }) {
                copy.routes.insert(copy.routes.remove(at: route), at: 0)
            }
        }
        copy.reachable = reachable && answered
        if !copy.reachable { copy.flags.removeAll { $0 == ReachabilityFlag.reachable.rawValue } }
        return copy
    }
}
