import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// A `sockaddr` as the address literal `Reachability(hostname:)` takes.
enum SocketAddressText {
    /// The literal, or nil for the zero address (the default route). Throws `invalidHost` for a
    /// family other than AF_INET and AF_INET6.
    static func parse(_ address: UnsafePointer<sockaddr>) throws -> String? {
        guard case .ip(let ip, _)? = SocketAddress(address)?.kind else {
            throw ReachabilityError.invalidHost("<sockaddr of family \(address.pointee.sa_family)>")
        }
        return ip.isUnspecified ? nil : ip.description
    }
}
