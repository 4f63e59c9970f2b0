import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Steady TCP traffic between two namespaces, so that the kernel keeps an smoothed RTT (and a
/// received-bytes count) for a socket whose path is the one under test: what reachd's passive
/// samples read with sock_diag. A server listens in `server`'s namespace; one client connection
/// from `client`'s namespace either exchanges a small request and response every `interval`
/// (`.requestResponse`), or receives a continuous stream from the server (`.bulk`).
///
/// In request/response mode the client's socket has an RTT sample each exchange (the response
/// acknowledges the request) and acknowledges each response at once (`TCP_QUICKACK`), so the
/// srtt of both ends follows the line within a few exchanges. Everything runs on threads of this
/// process: the sockets were made inside their namespaces (`inNetworkNamespace`). `stop()` (or
/// deinit) closes the connection and the listener and waits for the threads.
public final class TrafficLoop: @unchecked Sendable {
    public enum Mode: Sendable, Equatable {
        /// `requestBytes` up, `responseBytes` back, every `interval` seconds (or as soon as the
        /// previous exchange ended, when it took longer).
        case requestResponse(interval: TimeInterval)
        /// The server sends without pause and the client reads everything (a download).
        case bulk
    }

    /// What the client saw so far.
    public struct Statistics: Sendable, Equatable {
        /// Request/response exchanges completed.
        public var exchanges = 0
        /// Bytes the client received.
        public var receivedBytes = 0
        /// The last exchange's time from sending the request to the end of the response, seconds.
        public var lastExchangeTime: TimeInterval?
    }

    /// The kernel's view of the client's socket (`TCP_INFO`).
    public struct KernelRTT: Sendable, Equatable {
        /// `tcpi_rtt`: the smoothed RTT, seconds.
        public var smoothed: TimeInterval
        /// `tcpi_rttvar`, seconds.
        public var variance: TimeInterval
        /// `tcpi_total_retrans`: segments retransmitted over the connection's life.
        public var totalRetransmits: Int
    }

    public let mode: Mode
    /// The server's address and port.
    public let address: String
    public let port: Int
    /// The client socket's local port (to find it with `ss`: `sport = :PORT`).
    public let clientPort: Int

    private let listenFD: Int32
    private let clientFD: Int32
    private let stopRead: Int32, stopWrite: Int32
    private let shared = Shared()
    private let stopped = Mutex(false)
    private let threadsDone = DispatchSemaphore(value: 0)
    private var threadCount = 0

    private final class Shared: Sendable {
        let statistics = Mutex(Statistics())
        /// The server's accepted connections, shut down by `stop()`.
        let serverConnections = Mutex([Int32]())
    }

    /// Starts the server, connects the client (waiting at most `connectTimeout` seconds for the
    /// handshake) and starts the traffic.
    /// - Parameters:
    ///   - client: the namespace of the client (the machine under test: its socket is the sample).
    ///   - server: the namespace of the server; `address` must be one of its addresses, reachable
    ///     from `client`.
    ///   - port: the server's port; 0: one the kernel picks.
    public init(client: TestNamespace, server: TestNamespace, address: String, port: Int = 0,
                mode: Mode = .requestResponse(interval: 0.2), requestBytes: Int = 64, responseBytes: Int = 512,
                connectTimeout: TimeInterval = 15) throws {
        self.mode = mode
        self.address = address
        let family = address.contains(":") ? AF_INET6 : AF_INET
        let listener = try inNetworkNamespace(server) { try Self.listen(family: family, address: address, port: port) }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { close(listener.fd); throw FixtureError("pipe") }
        stopRead = fds[0]; stopWrite = fds[1]
        listenFD = listener.fd
        self.port = listener.port
        let clientFD: Int32
        do {
            clientFD = try inNetworkNamespace(client) { try Self.socket(family: family) }
        } catch {
            close(listenFD); close(stopRead); close(stopWrite)
            throw error
        }
        self.clientFD = clientFD
        // The handshake needs no accept: it completes in the listener's backlog.
        do {
            try Self.connect(clientFD, family: family, address: address, port: listener.port, timeout: connectTimeout)
        } catch {
            close(clientFD); close(listenFD); close(stopRead); close(stopWrite)
            throw error
        }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { getsockname(clientFD, $0, &length) } }
        clientPort = Self.port(of: local)
        spawn { [listenFD, shared, stopRead] in Self.serve(listenFD: listenFD, shared: shared, mode: mode, stopRead: stopRead,
                                                          requestBytes: requestBytes, responseBytes: responseBytes) }
        spawn { [shared, stopRead] in Self.drive(clientFD, shared: shared, mode: mode, stopRead: stopRead,
                                                 requestBytes: requestBytes, responseBytes: responseBytes) }
    }

    /// What the client saw so far.
    public var statistics: Statistics { shared.statistics.withLock { $0 } }

    /// The client socket's `TCP_INFO`, or nil when it cannot be read (closed).
    public var kernelRTT: KernelRTT? {
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(clientFD, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return nil }
        return KernelRTT(smoothed: TimeInterval(info.tcpi_rtt) / 1e6, variance: TimeInterval(info.tcpi_rttvar) / 1e6,
                         totalRetransmits: Int(info.tcpi_total_retrans))
    }

    /// The client socket's smoothed RTT as `ss -ti` shows it in `client` (the namespace the loop
    /// was made with), seconds; nil when ss does not list the socket. Another reader of the same
    /// kernel figure as `kernelRTT`, for calibration.
    public func ssSmoothedRTT(in client: TestNamespace) throws -> TimeInterval? {
        let output = try client.exec("ss -Htin state established sport = :\(clientPort)", check: false)
        guard let match = output.firstMatch(of: /\brtt:([0-9.]+)\//), let milliseconds = Double(match.1) else { return nil }
        return milliseconds / 1000
    }

    /// Waits until `count` more exchanges (request/response) or `count` KiB more (bulk) completed,
    /// at most `timeout` seconds; false on timeout.
    public func waitForProgress(_ count: Int, timeout: TimeInterval) -> Bool {
        let start = statistics
        return waitUntil(timeout: timeout) {
            let now = statistics
            switch mode {
            case .requestResponse: return now.exchanges - start.exchanges >= count
            case .bulk: return now.receivedBytes - start.receivedBytes >= count * 1024
            }
        }
    }

    /// Closes the connection and the listener and waits for the threads. Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(stopWrite, &byte, 1)
        shutdown(clientFD, Int32(SHUT_RDWR))
        shutdown(listenFD, Int32(SHUT_RDWR))
        shared.serverConnections.withLock { $0.forEach { shutdown($0, Int32(SHUT_RDWR)) } }
        for _ in 0 ..< threadCount { threadsDone.wait() }
        shared.serverConnections.withLock { $0.forEach { close($0) }; $0 = [] }
        close(clientFD); close(listenFD); close(stopRead); close(stopWrite)
    }

    deinit { stop() }

    // MARK: - Threads

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        threadCount += 1
        let done = threadsDone
        Thread {
            body()
            done.signal()
        }.start()
    }

    /// True once `stop()` wrote to the pipe.
    private static func stopping(_ stopRead: Int32) -> Bool {
        var poller = pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// Waits `seconds`, or less when `stop()` comes first (returns true then).
    private static func pause(_ seconds: TimeInterval, stopRead: Int32) -> Bool {
        var poller = pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, Int32(max(0, seconds) * 1000)) > 0
    }

    private static func serve(listenFD: Int32, shared: Shared, mode: Mode, stopRead: Int32, requestBytes: Int, responseBytes: Int) {
        // One connection is all the client makes; serve it on this thread.
        let connection = accept(listenFD, nil, nil)
        guard connection >= 0 else { return }
        shared.serverConnections.withLock { $0.append(connection) }
        if stopping(stopRead) { shutdown(connection, Int32(SHUT_RDWR)) }
        var one: Int32 = 1
        setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        switch mode {
        case .requestResponse:
            var request = [UInt8](repeating: 0, count: requestBytes)
            let response = [UInt8](repeating: 0x52, count: responseBytes)
            while receive(connection, into: &request), send(connection, response) {
                setsockopt(connection, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
            }
        case .bulk:
            let chunk = [UInt8](repeating: 0x42, count: 65_536)
            while send(connection, chunk) {}
        }
    }

    private static func drive(_ fd: Int32, shared: Shared, mode: Mode, stopRead: Int32, requestBytes: Int, responseBytes: Int) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        switch mode {
        case let .requestResponse(interval):
            let request = [UInt8](repeating: 0x51, count: requestBytes)
            var response = [UInt8](repeating: 0, count: responseBytes)
            while !stopping(stopRead) {
                let began = monotonicNanoseconds()
                guard send(fd, request), receive(fd, into: &response) else { return }
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
                let took = TimeInterval(monotonicNanoseconds() - began) / 1e9
                shared.statistics.withLock {
                    $0.exchanges += 1
                    $0.receivedBytes += responseBytes
                    $0.lastExchangeTime = took
                }
                if pause(interval - took, stopRead: stopRead) { return }
            }
        case .bulk:
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                shared.statistics.withLock { $0.receivedBytes += count }
            }
        }
    }

    /// Reads exactly `buffer.count` bytes; false on EOF or error.
    private static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// Writes all of `bytes`; false on error.
    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    // MARK: - Sockets

    private static func socket(family: Int32) throws -> Int32 {
        let fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket") }
        return fd
    }

    private static func listen(family: Int32, address: String, port: Int) throws -> (fd: Int32, port: Int) {
        let fd = try socket(family: family)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = try socketAddress(family: family, address: address, port: port)
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else {
            let error = FixtureError("bind/listen \(address) port \(port)")
            close(fd)
            throw error
        }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) } }
        return (fd, Self.port(of: local))
    }

    private static func connect(_ fd: Int32, family: Int32, address: String, port: Int, timeout: TimeInterval) throws {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var storage = try socketAddress(family: family, address: address, port: port)
        let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let result = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: Glibc.sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) } }
        guard result == 0 else { throw FixtureError("connect to \(address) port \(port)") }
        var none = timeval()
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func socketAddress(family: Int32, address: String, port: Int) throws -> sockaddr_storage {
        var storage = sockaddr_storage()
        let parsed: Int32 = withUnsafeMutablePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    sin6.pointee.sin6_family = sa_family_t(AF_INET6)
                    sin6.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                    return inet_pton(AF_INET6, address, &sin6.pointee.sin6_addr)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                sin.pointee.sin_family = sa_family_t(AF_INET)
                sin.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                return inet_pton(AF_INET, address, &sin.pointee.sin_addr)
            }
        }
        guard parsed == 1 else { throw FixtureError("not an address: \(address)", errno: EINVAL) }
        return storage
    }

    private static func port(of storage: sockaddr_storage) -> Int {
        var storage = storage
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }
}

extension TrafficLoop {
    /// A loop through `line`: the client in its host namespace, the server at its `remoteAddress`
    /// (`remoteAddress6` with `ipv6`) in its network namespace.
    public convenience init(through line: DelayLine, mode: Mode = .requestResponse(interval: 0.2), ipv6: Bool = false) throws {
        try self.init(client: line.host, server: line.network, address: ipv6 ? line.remoteAddress6 : line.remoteAddress, mode: mode)
    }
}
