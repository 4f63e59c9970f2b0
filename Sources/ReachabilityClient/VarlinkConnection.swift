import FoundationEssentials
import ReachabilityCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A blocking varlink connection to reachd, for one thread at a time; `shutdown()` may be called
/// from any thread to make a blocked `receive()` return.
public final class VarlinkConnection: @unchecked Sendable {
    public let socketPath: String
    /// The socket; -1 once closed.
    private let fd: Mutex<Int32>
    private var framer = VarlinkFramer(limit: 16 << 20)

    /// Connects (`connect(2)`); ENOENT and ECONNREFUSED mean no daemon.
    /// - Parameter timeout: SO_RCVTIMEO/SO_SNDTIMEO for every later read and write; nil: none.
    public init(socketPath: String, timeout: TimeInterval? = nil) throws {
        self.socketPath = socketPath
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ReachabilityClientError.connectionFailed(socketPath: socketPath, reason: "path too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes); raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ReachabilityClientError.connectionFailed(socketPath: socketPath, reason: String(cString: strerror(errno)))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw ReachabilityClientError.daemonNotRunning(socketPath: socketPath)
            default: throw ReachabilityClientError.connectionFailed(socketPath: socketPath, reason: String(cString: strerror(code)))
            }
        }
        if let timeout {
            var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        self.fd = Mutex(fd)
    }

    deinit { close() }

    /// Sends one call.
    public func send(_ call: VarlinkCall) throws {
        var data = try VarlinkCodec.encode(call)
        data.append(0)
        try write(data)
    }

    /// Sends raw bytes (tests use it to send garbage).
    public func write(_ data: Data) throws {
        let fd = self.fd.withLock { $0 }
        guard fd >= 0 else { throw ReachabilityClientError.connectionClosed }
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 { offset += written; continue }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ReachabilityClientError.timedOut }
            throw ReachabilityClientError.connectionClosed
        }
    }

    /// Blocks for the next reply.
    public func receive() throws -> VarlinkReply {
        try VarlinkCodec.decodeReply(receiveMessage())
    }

    /// Blocks for the next message's bytes (without NUL).
    public func receiveMessage() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            do {
                if let message = try framer.next() { return message }
            } catch {
                throw ReachabilityClientError.protocolError("\(error)")
            }
            let fd = self.fd.withLock { $0 }
            guard fd >= 0 else { throw ReachabilityClientError.connectionClosed }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { framer.append(buffer[0..<count]); continue }
            if count == 0 { throw ReachabilityClientError.connectionClosed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw ReachabilityClientError.timedOut
            default: throw ReachabilityClientError.connectionClosed
            }
        }
    }

    /// One call, one reply; a varlink error becomes `ReachabilityClientError.remote`.
    public func call(_ call: VarlinkCall) throws -> VarlinkReply {
        try send(call)
        let reply = try receive()
        if let error = reply.error { throw ReachabilityClientError.remote(VarlinkError(error, parameters: reply.parameters)) }
        return reply
    }

    /// Makes a blocked `receive()` return (from any thread); the descriptor stays until `close()`.
    public func shutdown() {
        fd.withLock { fd in if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    public func close() {
        fd.withLock { fd in
            if fd >= 0 { Glibc.close(fd); fd = -1 }
        }
    }
}
