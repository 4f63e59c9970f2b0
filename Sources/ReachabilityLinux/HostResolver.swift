import Foundation
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// One address a host name resolved to, ready for `connect(2)`.
struct ResolvedAddress: Sendable {
    var family: Int32
    /// The `sockaddr_in`/`sockaddr_in6` bytes.
    var sockaddr: [UInt8]
    /// The numeric address (`10.77.0.1`, `fd00::1`).
    var text: String
}

/// getaddrinfo(3) with a deadline, on a thread of its own.
///
/// glibc's resolver blocks for as long as resolv.conf's timeouts say (tens of seconds with
/// unreachable name servers), and cannot be interrupted. So the look-up runs on a detached
/// thread; the caller waits for it only until the deadline or a cancellation, then gives up
/// and leaves the thread to finish (and its result to be dropped) on its own. Address
/// literals are converted at once, without a thread.
enum HostResolver {
    /// Resolves `host` for TCP `port` inside `networkNamespace` (nil: the current one).
    /// `cancelFD`, when readable, stops the wait early.
    static func resolve(host: String, port: Int, networkNamespace: String?, deadline: Date,
                        cancelFD: Int32?) -> Result<[ResolvedAddress], ProbeFailure> {
        if let literal = numeric(host: host, port: port) { return .success([literal]) }
        let lookup = Lookup()
        let thread = Thread {
            let result: Result<[ResolvedAddress], ProbeFailure>
            do {
                result = try NetworkNamespace.run(in: networkNamespace) { getaddrinfo(host: host, port: port, flags: 0) }
            } catch {
                result = .failure(ProbeFailure(.other, "\(error)"))
            }
            lookup.finish(result)
        }
        thread.name = "reachd-resolve"
        thread.start()
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                return .failure(ProbeFailure(.dnsFailure, "resolving \(host): no answer within the timeout"))
            }
            var fds = [pollfd(fd: lookup.readFD, events: Int16(POLLIN), revents: 0)]
            if let cancelFD { fds.append(pollfd(fd: cancelFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno != EINTR {
                return .failure(ProbeFailure(.other, "poll: \(String(cString: strerror(errno)))"))
            }
            if fds.count > 1 && fds[1].revents != 0 {
                return .failure(ProbeFailure(.other, "cancelled"))
            }
            if let result = lookup.result { return result }
        }
    }

    /// `host` as an address literal, or nil when it is a name.
    static func numeric(host: String, port: Int) -> ResolvedAddress? {
        guard case .success(let addresses) = getaddrinfo(host: host, port: port, flags: AI_NUMERICHOST),
              let first = addresses.first else { return nil }
        return first
    }

    /// Wraps getaddrinfo(3) (TCP, any family) with its error text (gai_strerror).
    static func getaddrinfo(host: String, port: Int, flags: Int32) -> Result<[ResolvedAddress], ProbeFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let status = Glibc.getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let text = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(ProbeFailure(.dnsFailure, "resolving \(host): \(text)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            guard let address = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6 else { continue }
            let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
            addresses.append(ResolvedAddress(family: info.ai_family, sockaddr: bytes, text: numericText(address, info.ai_addrlen)))
        }
        guard !addresses.isEmpty else { return .failure(ProbeFailure(.dnsFailure, "resolving \(host): no IPv4 or IPv6 address")) }
        return .success(addresses)
    }

    /// getnameinfo(3) with NI_NUMERICHOST.
    static func numericText(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The hand-over between the resolver thread and the waiter: the result, and a pipe that
    /// becomes readable when it is there. The pipe closes when the last of the two lets go.
    private final class Lookup: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Result<[ResolvedAddress], ProbeFailure>?
        let readFD: Int32
        private let writeFD: Int32

        init() {
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            }
            readFD = fds[0]; writeFD = fds[1]
        }

        var result: Result<[ResolvedAddress], ProbeFailure>? { lock.withLock { stored } }

        func finish(_ result: Result<[ResolvedAddress], ProbeFailure>) {
            lock.withLock { stored = result }
            var byte: UInt8 = 1
            _ = write(writeFD, &byte, 1)
        }

        deinit {
            if readFD >= 0 { close(readFD) }
            if writeFD >= 0 { close(writeFD) }
        }
    }
}
