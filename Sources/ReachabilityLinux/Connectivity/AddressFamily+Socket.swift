import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

extension AddressFamily {
    /// The socket API's constant: `AF_INET`, `AF_INET6`.
    public var socketFamily: Int32 {
        switch self {
        case .ipv4: return AF_INET
        case .ipv6: return AF_INET6
        }
    }

    /// `IPv4`, `IPv6`: the family as people write it.
    public var displayName: String {
        switch self {
        case .ipv4: return "IPv4"
        case .ipv6: return "IPv6"
        }
    }
}
