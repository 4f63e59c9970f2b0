#if canImport(Glibc)
import Glibc
#endif

/// A `sockaddr` as the address literal `Reachability(hostname:)` takes.
enum SocketAddressText {
    /// The literal, or nil for the zero address (the default route). Throws `invalidHost` for a
    /// family other than AF_INET and AF_INET6.
    static func parse(_ address: UnsafePointer<sockaddr>) throws -> String? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            if inet.s_addr == 0 { return nil }
            return text(AF_INET, &inet, length: Int(INET_ADDRSTRLEN))
        case AF_INET6:
            var inet6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            let isZero = withUnsafeBytes(of: &inet6) { bytes in bytes.allSatisfy { $0 == 0 } }
            if isZero { return nil }
            return text(AF_INET6, &inet6, length: Int(INET6_ADDRSTRLEN))
        default:
            throw ReachabilityError.invalidHost("<sockaddr of family \(address.pointee.sa_family)>")
        }
    }

    private static func text<T>(_ family: Int32, _ address: inout T, length: Int) -> String {
        var buffer = [CChar](repeating: 0, count: length)
        _ = withUnsafePointer(to: &address) { inet_ntop(family, $0, &buffer, socklen_t(length)) }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
