/// How the machine reaches the network: the `NetworkStatus` of Apple's Reachability sample
/// (with 2G/3G/4G), extended for Linux.
///
/// The raw values are the names on the wire (varlink) and in `reachctl`.
public enum NetworkStatus: String, Codable, Sendable, CaseIterable {
    /// No usable default route: no interface that is up, has carrier, a usable address and a default route.
    case notReachable
    /// Reachable, but the kind of the primary interface cannot be told.
    case unknown
    case ethernet
    case wifi
    /// Cellular, generation unknown.
    case wwan
    case wwan2G
    case wwan3G
    case wwan4G
    case wwan5G

    /// True for every cellular value.
    public var isWWAN: Bool {
        switch self {
        case .wwan, .wwan2G, .wwan3G, .wwan4G, .wwan5G: return true
        case .notReachable, .unknown, .ethernet, .wifi: return false
        }
    }

    /// True for every value but `notReachable`.
    public var isReachable: Bool {
        switch self {
        case .notReachable: return false
        case .unknown, .ethernet, .wifi, .wwan, .wwan2G, .wwan3G, .wwan4G, .wwan5G: return true
        }
    }
}

/// What kind of network an interface is. Raw values are the wire names.
public enum InterfaceKind: String, Codable, Sendable, CaseIterable {
    case loopback, ethernet, wifi, wwan, vpn, bridge, virtual, other
}

/// Does the internet answer? NetworkManager's vocabulary.
public enum Connectivity: String, Codable, Sendable, CaseIterable {
    /// Not checked yet, or checks disabled.
    case unknown
    /// Not reachable at all.
    case none
    /// An HTTP answer that is not the expected one (redirect, other body): a captive portal.
    case portal
    /// A local network, but the check fails (timeout, refused, DNS failure).
    case limited
    /// The expected answer came back.
    case full

    /// How good a verdict is: `full` > `portal` > `limited` > `unknown` > `none`. A family that
    /// works makes the machine online, as NetworkManager takes the best of its checks; a portal
    /// on one family does not hide `full` on the other, and a check that answered at all
    /// (`limited`) says more than none made.
    public var rank: Int {
        switch self {
        case .none: return 0
        case .unknown: return 1
        case .limited: return 2
        case .portal: return 3
        case .full: return 4
        }
    }

    /// The better of two verdicts (`rank`).
    public static func best(_ a: Connectivity, _ b: Connectivity) -> Connectivity {
        b.rank > a.rank ? b : a
    }
}

/// SCNetworkReachability's flag names, where they apply on Linux.
public enum ReachabilityFlag: String, Codable, Sendable, CaseIterable {
    case reachable
    /// A link with carrier but no address or route yet.
    case connectionRequired
    /// The path goes through a VPN or PPP.
    case transientConnection
    case isWWAN
    /// The destination is on-link (host checks).
    case isDirect
    /// The destination is an address of this machine (host checks).
    case isLocalAddress
    /// IPv6-only, the IPv4 internet reached through NAT64: a CLAT carries IPv4, or the
    /// uplink's routers announce a NAT64 prefix (PREF64) and there is no IPv4 path.
    case nat64
}
