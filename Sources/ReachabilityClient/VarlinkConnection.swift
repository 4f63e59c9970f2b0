import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

/// A blocking varlink connection to reachd, for one thread at a time; `shutdown()` and `close()`
/// may be called from any thread to make a blocked `receive()` return.
public final class VarlinkConnection: @unchecked Sendable {
    public let socketPath: String
    /// Freed with the connection: a `receive()` that races `close()` on another thread then
    /// never reads from a number the process has given to another file meanwhile.
    private let descriptor: FileDescriptor
    private let closed = Mutex(false)
    private var framer = VarlinkFramer(limit: 16 << 20)

    /// Connects (`connect(2)`); ENOENT and ECONNREFUSED mean no daemon.
    /// - Parameter timeout: SO_RCVTIMEO/SO_SNDTIMEO for every later read and write; nil: none.
    public init(socketPath: String, timeout: TimeInterval? = nil) throws {
        self.socketPath = socketPath
        do {
            descriptor = try FileDescriptor.connected(to: .unix(socketPath))
        } catch {
            switch error {
            case .noSuchFile, .connectionRefused, .notDirectory: throw ReachabilityClientError.daemonNotRunning(socketPath: socketPath)
            default: throw ReachabilityClientError.connectionFailed(socketPath: socketPath, reason: error)
            }
        }
        if let timeout { try? descriptor.setTimeout(seconds: timeout) }
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
        guard !closed.withLock({ $0 }) else { throw ReachabilityClientError.connectionClosed }
        var offset = 0
        while offset < data.count {
            let sent: Result<Int, Errno> = data.withUnsafeBytes { raw in
                Result { () throws(Errno) in try descriptor.send(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            }
            switch sent {
            case .success(let written) where written > 0: offset += written
            case .failure(let error) where error.isWouldBlock: throw ReachabilityClientError.timedOut
            case .success, .failure: throw ReachabilityClientError.connectionClosed
            }
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
            guard !closed.withLock({ $0 }) else { throw ReachabilityClientError.connectionClosed }
            let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try descriptor.receive(into: raw) }
            }
            switch received {
            case .success(let count) where count > 0: framer.append(buffer[0..<count])
            case .failure(let error) where error.isWouldBlock: throw ReachabilityClientError.timedOut
            case .success, .failure: throw ReachabilityClientError.connectionClosed
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

    /// Makes a blocked `receive()` return (from any thread), as the daemon closing would.
    public func shutdown() {
        closed.withLock { if !$0 { descriptor.shutdown(.readWrite) } }
    }

    /// Ends the connection (`shutdown(2)`): the daemon sees it closed, a blocked `receive()`
    /// returns, and later calls throw `connectionClosed`. The descriptor itself is closed when
    /// the connection is released.
    public func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            descriptor.shutdown(.readWrite)
        }
    }
}
