/// One option of an IPv6 router advertisement that the kernel hands on rather than acting on it
/// (`RTM_NEWNDUSEROPT`): what the network announces beyond addresses and routes.
public struct RouterOption: Equatable, Hashable, Sendable {
    /// What the option says.
    public enum Content: Equatable, Hashable, Sendable {
        /// RFC 8910 (type 37): the captive-portal API URI. `RouterOption.unrestricted` says there
        /// is no portal, and withdraws an API announced before.
        case captivePortal(String)
        /// RFC 8106 RDNSS (type 25): recursive DNS servers.
        case dnsServers([String])
        /// RFC 8106 DNSSL (type 31): the DNS search list.
        case searchDomains([String])
        /// RFC 8781 PREF64 (type 38): the NAT64 prefix, in CIDR form (`64:ff9b::/96`).
        case nat64Prefix(String)
    }

    /// The RFC 8910 URN that says the network has no captive portal.
    public static let unrestricted = "urn:ietf:params:capport:unrestricted"

    /// The interface the advertisement came in on.
    public var ifindex: Int
    public var content: Content
    /// How long the option holds, in seconds; 0 withdraws what it names, `UInt32.max` is
    /// forever. Nil for the captive-portal option, which has no lifetime of its own.
    public var lifetime: UInt32?
    /// When the option arrived, in seconds of the monitor's monotonic clock (it stamps the
    /// option as it applies it; the decoder leaves 0).
    public var receivedAt: Double
    /// The link-local address of the router that sent the advertisement (`NDUSEROPT_SRCADDR`);
    /// nil when the kernel did not say. The captive-portal URI ages with its router's advertisements.
    public var router: String?

    public init(ifindex: Int, content: Content, lifetime: UInt32?, receivedAt: Double = 0, router: String? = nil) {
        self.ifindex = ifindex; self.content = content; self.lifetime = lifetime; self.receivedAt = receivedAt
        self.router = router
    }

    /// True for a captive-portal option (an URI, or the unrestricted URN).
    var isCaptivePortal: Bool {
        switch content {
        case .captivePortal: return true
        case .dnsServers, .searchDomains, .nat64Prefix: return false
        }
    }

    /// When the option runs out, in the clock of `receivedAt`; nil: never.
    var deadline: Double? {
        guard let lifetime, lifetime != UInt32.max else { return nil }
        return receivedAt + Double(lifetime)
    }
}

/// An option the decoder refused: which, and why (for the log; nothing else changes).
public struct RouterOptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The ND option type (25, 31, 37, 38).
    public var type: Int
    public var problem: String

    public init(type: Int, problem: String) { self.type = type; self.problem = problem }

    public var description: String {
        "router advertisement option \(type) (\(RouterOptionParser.name(of: type))): \(problem)"
    }
}
