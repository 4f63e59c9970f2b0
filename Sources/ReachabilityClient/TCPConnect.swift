import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// The TCP connect of `Check(host:, port:)`, made by the client in its own process: its own
/// network namespace, routes and credentials decide whether it gets through, never reachd's.
/// A non-blocking `connect(2)` waited for with `poll(2)`; closed as soon as it is established,
/// nothing is sent.
public enum TCPConnect {
    /// Connects to `address` (an IPv4 or IPv6 literal) on `port` within `timeout` seconds.
    /// A refusal is `TCPCheck.refusedError` (`portClosed`): the host answered.
    public static func connect(address: String, port: Int, timeout: TimeInterval) -> TCPCheck {
        func failed(_ text: String) -> TCPCheck { TCPCheck(port: port, connected: false, rttMs: nil, error: text) }
        guard let destination = Destination(address, port: port) else { return failed("\(address) is not an IP address") }
        let fd = socket(destination.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return failed("socket: \(errorText(errno))") }
        defer { close(fd) }

        let start = ContinuousClock.now
        let rc = destination.withSockaddr { Glibc.connect(fd, $0, $1) }
        if rc != 0 && errno != EINPROGRESS { return failed(errorText(errno)) }
        if rc != 0 {
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let deadline = start + .milliseconds(Int(min(max(timeout, 0), 3600) * 1000))
            while true {
                let ms = Int32(max(0, ((deadline - .now) / .milliseconds(1)).rounded(.up)))
                let ready = poll(&descriptor, 1, ms)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 { return failed("poll: \(errorText(errno))") }
                if ready == 0 { return failed("timed out after \(seconds(timeout))") }
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

    /// The daemon's answer with this process's TCP connect: the candidate addresses in turn
    /// until one answers (connects or refuses), within `timeout` for all of them.
    public static func complete(_ answer: HostCheck, port: Int, timeout: TimeInterval) -> HostCheck {
        let candidates = answer.tcpCandidates
        guard !candidates.isEmpty else {
            return answer.withTCP(TCPCheck(port: port, connected: false, rttMs: nil, error: "not attempted: no usable route"), address: nil)
        }
        let deadline = Date().addingTimeInterval(timeout)
        var last: (address: String, check: TCPCheck)?
        for address in candidates {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            let check = connect(address: address, port: port, timeout: left)
            last = (address, check)
            if check.connected || check.portClosed { break }
        }
        guard let last else {
            return answer.withTCP(TCPCheck(port: port, connected: false, rttMs: nil, error: "timed out after \(seconds(timeout))"), address: nil)
        }
        return answer.withTCP(last.check, address: last.address)
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// `5 s`, `0.25 s`.
    static func seconds(_ t: TimeInterval) -> String {
        let ms = (t * 1000).rounded()
        return ms.truncatingRemainder(dividingBy: 1000) == 0 ? "\(Int(ms / 1000)) s" : "\(ms / 1000) s"
    }
}

/// A sockaddr_in/sockaddr_in6 for an address literal and port.
private struct Destination {
    let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    init?(_ address: String, port: Int) {
        let networkPort = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        if let bytes = HostName.ipv4Bytes(address) {
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = networkPort
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: bytes) }
            family = AF_INET; length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { raw in withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) } }
        } else if let bytes = HostName.ipv6Bytes(address) {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = networkPort
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
