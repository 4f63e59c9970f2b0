import CNetlink
import CSystemd // owns <sys/socket.h>'s SOCK_* enum once sd-daemon.h is in the module graph
import Foundation
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// One TCP connect along a known path: a non-blocking `connect(2)` bound to the route's output
/// interface (SO_BINDTODEVICE) and source address, waited for with `poll(2)` up to a timeout.
/// The connection is closed as soon as it is established; nothing is sent.
public enum TCPConnector {
    /// Connects to `address`:`port`.
    ///
    /// - Parameters:
    ///   - source: the route's preferred source, bound before connecting (nil: the kernel chooses).
    ///   - device: the route's output interface (nil: no binding; local destinations use lo).
    ///   - networkNamespace: where the socket is created (tests).
    public static func connect(address: String, port: Int, source: String? = nil, device: String? = nil,
                               timeout: TimeInterval, networkNamespace: String? = nil) -> TCPCheck {
        func failed(_ text: String) -> TCPCheck { TCPCheck(port: port, connected: false, rttMs: nil, error: text) }
        guard let destination = SocketAddress(address, port: port) else { return failed("\(address) is not an IP address") }

        let opened: Int32
        do {
            opened = try NetworkNamespace.run(in: networkNamespace) {
                socket(destination.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            }
        } catch {
            return failed("\(error)")
        }
        guard opened >= 0 else { return failed("socket: \(errorText(errno))") }
        let fd = opened
        defer { close(fd) }

        if let device {
            let rc = device.withCString { setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1)) }
            guard rc == 0 else { return failed("SO_BINDTODEVICE \(device): \(errorText(errno))") }
        }
        if let source, let local = SocketAddress(source, port: 0), local.family == destination.family {
            let rc = local.withSockaddr { bind(fd, $0, $1) }
            guard rc == 0 else { return failed("bind \(source): \(errorText(errno))") }
        }

        let start = ContinuousClock.now
        let rc = destination.withSockaddr { Glibc.connect(fd, $0, $1) }
        if rc != 0 && errno != EINPROGRESS { return failed(errorText(errno)) }
        if rc != 0 {
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let deadline = start + .milliseconds(Int(timeout * 1000))
            while true {
                let ms = Int32(max(0, ((deadline - .now) / .milliseconds(1)).rounded(.up)))
                let ready = poll(&descriptor, 1, ms)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 { return failed("poll: \(errorText(errno))") }
                if ready == 0 { return failed("timed out after \(HostResolver.seconds(timeout))") }
                break
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0 else { return failed("getsockopt: \(errorText(errno))") }
            if socketError != 0 { return failed(errorText(socketError)) }
        }
        let ms = (ContinuousClock.now - start) / .milliseconds(1)
        return TCPCheck(port: port, connected: true, rttMs: (ms * 1000).rounded() / 1000, error: nil)
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}

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
