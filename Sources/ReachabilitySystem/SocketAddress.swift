#if canImport(Glibc)
import Glibc
#endif

/// Where a socket binds or connects: a Unix socket path, or an IP address and port. Made into
/// the C `sockaddr_un`/`sockaddr_in`/`sockaddr_in6` in one place, `withSockaddr`.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The three kinds of address.
    public enum Kind: Hashable, Sendable {
        /// A socket file (`sockaddr_un` with a path).
        case unix(path: String)
        /// A name in Linux's abstract socket namespace (no file; `@name` in systemd's notation).
        case abstractUnix(name: String)
        /// `sockaddr_in` or `sockaddr_in6`.
        case ip(IPAddress, port: UInt16)
    }

    /// What the address is.
    public let kind: Kind

    /// The longest Unix socket path: `sun_path` holds 108 bytes with the terminating NUL.
    public static let maxUnixPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A Unix socket path; throws `ENAMETOOLONG` (naming the path and the limit) for a path
    /// `sun_path` cannot hold.
    public static func unix(_ path: String) throws(Errno) -> SocketAddress {
        guard path.utf8.count <= maxUnixPathLength else {
            throw Errno(ENAMETOOLONG, call: "socket path longer than \(maxUnixPathLength) bytes", path: path)
        }
        return SocketAddress(kind: .unix(path: path))
    }

    /// A name in Linux's abstract namespace: `sun_path` is a NUL and the name, without a
    /// terminator. Throws `ENAMETOOLONG` for a name `sun_path` cannot hold.
    public static func abstractUnix(_ name: String) throws(Errno) -> SocketAddress {
        guard name.utf8.count <= maxUnixPathLength else {
            throw Errno(ENAMETOOLONG, call: "socket name longer than \(maxUnixPathLength) bytes", path: "@" + name)
        }
        return SocketAddress(kind: .abstractUnix(name: name))
    }

    /// An IP address and port.
    public static func ip(_ address: IPAddress, port: UInt16) -> SocketAddress {
        SocketAddress(kind: .ip(address, port: port))
    }

    /// An IP address literal and port; nil when `text` is not an IPv4 or IPv6 literal.
    public init?(ip text: String, port: UInt16) {
        guard let address = IPAddress(text) else { return nil }
        kind = .ip(address, port: port)
    }

    private init(kind: Kind) { self.kind = kind }

    /// The address a C call filled in (`accept(2)`, `getsockname(2)`, a `sockaddr` an API was
    /// given); nil for a family other than `AF_UNIX`, `AF_INET` and `AF_INET6`. An abstract Unix
    /// name is told from an unnamed socket by `length`, which the call returned.
    public init?(_ address: UnsafePointer<sockaddr>, length: socklen_t? = nil) {
        switch CInt(address.pointee.sa_family) {
        case AF_UNIX:
            let nameLength = length.map { Int($0) - MemoryLayout<sa_family_t>.size } ?? 0
            kind = address.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { un in
                withUnsafeBytes(of: un.pointee.sun_path) { raw in
                    if raw[0] == 0 && nameLength > 1 {
                        return .abstractUnix(name: String(decoding: raw[1..<min(nameLength, raw.count)], as: UTF8.self))
                    }
                    return .unix(path: String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self))
                }
            }
        case AF_INET:
            kind = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var inet = sin.pointee.sin_addr
                let ip = IPAddress(.ipv4, &inet)
                return .ip(ip, port: UInt16(bigEndian: sin.pointee.sin_port))
            }
        case AF_INET6:
            kind = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                var inet6 = sin6.pointee.sin6_addr
                let ip = IPAddress(.ipv6, &inet6)
                return .ip(ip, port: UInt16(bigEndian: sin6.pointee.sin6_port))
            }
        default:
            return nil
        }
    }

    /// `AF_UNIX`, `AF_INET` or `AF_INET6`.
    public var family: CInt {
        switch kind {
        case .unix, .abstractUnix: return AF_UNIX
        case .ip(let address, _): return address.family.rawValue
        }
    }

    /// The path of a Unix socket address; nil for an IP one.
    public var path: String? {
        switch kind {
        case .unix(let path): return path
        case .abstractUnix, .ip: return nil
        }
    }

    /// `/run/reachd/reachd.sock`, `@name`, `192.0.2.1:80`, `[2001:db8::1]:80`.
    public var description: String {
        switch kind {
        case .unix(let path): return path
        case .abstractUnix(let name): return "@" + name
        case .ip(let address, let port):
            switch address.family {
            case .ipv4: return "\(address):\(port)"
            case .ipv6: return "[\(address)]:\(port)"
            }
        }
    }

    /// Calls `body` with the C `sockaddr` and its length (`sockaddr_un`, `sockaddr_in` or
    /// `sockaddr_in6`).
    public func withSockaddr<T, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> T) throws(E) -> T {
        var storage = sockaddr_storage()
        /// Copies `address` to the start of `storage`; its size is the length the calls take.
        func store<Address>(_ address: Address) -> Int {
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: address) { raw.copyMemory(from: $0) } }
            return MemoryLayout<Address>.size
        }
        let length: Int
        switch kind {
        case .unix(let path):
            var un = sockaddr_un()
            un.sun_family = sa_family_t(AF_UNIX)
            // `unix(_:)` checked the length; the rest of sun_path is zero.
            withUnsafeMutableBytes(of: &un.sun_path) { $0.copyBytes(from: path.utf8.prefix(Self.maxUnixPathLength)) }
            length = store(un)
        case .abstractUnix(let name):
            var un = sockaddr_un()
            un.sun_family = sa_family_t(AF_UNIX)
            // A leading NUL, then the name; the length, not a terminator, ends it.
            withUnsafeMutableBytes(of: &un.sun_path) { $0[1...].copyBytes(from: name.utf8.prefix(Self.maxUnixPathLength)) }
            length = store(un) - MemoryLayout.size(ofValue: un.sun_path) + 1 + min(name.utf8.count, Self.maxUnixPathLength)
        case .ip(let address, let port) where address.family == .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(port.bigEndian)
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: address.bytes) }
            length = store(sin)
        case .ip(let address, let port):
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(port.bigEndian)
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: address.bytes) }
            length = store(sin6)
        }
        return try withUnsafePointer(to: &storage) { pointer throws(E) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(E) -> T in
                try body(address, socklen_t(length))
            }
        }
    }
}
