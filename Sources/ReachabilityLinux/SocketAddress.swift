import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// A sockaddr_in/sockaddr_in6 for an address literal and port.
struct SocketAddress {
    let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    init?(_ address: String, port: Int) {
        if let bytes = HostName.ipv4Bytes(address) {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: bytes) }
            family = AF_INET; length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) } }
        } else if let bytes = HostName.ipv6Bytes(address) {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: bytes) }
            family = AF_INET6; length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) } }
        } else {
            return nil
        }
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
