import Dispatch
import ReachabilitySystem

/// What a non-blocking send or receive did.
enum IOResult: Equatable {
    /// This many bytes went (0 from a receive: the peer closed).
    case processed(Int)
    /// The socket is full (send) or empty (receive): wait for a Dispatch source.
    case wouldBlock
    case failed(Errno)
}

extension IOResult {
    /// A failed call: `.wouldBlock` for `EAGAIN`, else `.failed`.
    init(_ error: Errno) {
        self = error.isWouldBlock ? .wouldBlock : .failed(error)
    }

    /// What `FileDescriptor.send(_:toEach:sent:)` reported for one socket: a byte count, or the
    /// negated `errno`.
    init(sent: Int) {
        self = sent >= 0 ? .processed(sent) : IOResult(Errno(CInt(truncatingIfNeeded: -sent), call: "send"))
    }
}

/// The socket of one accepted connection and the Dispatch sources watching it, confined to one
/// queue (the read source's handler may run on another). The descriptor is closed exactly once: when the owner has closed the connection and
/// every source on it has finished, since closing it earlier would let a new connection take
/// the number while a source still watches it.
final class ConnectionSocket: @unchecked Sendable {
    private var descriptor: FileDescriptor?
    private let queue: DispatchQueue
    private var openSources = 0
    private var closed = false

    init(_ descriptor: consuming FileDescriptor, queue: DispatchQueue) {
        self.descriptor = consume descriptor
        self.queue = queue
    }

    /// A read source on the socket (resumed by the caller); `handler` runs on `handlerQueue`
    /// (the owner's queue unless given: the server reads and decodes on a queue of its own).
    func makeReadSource(on handlerQueue: DispatchQueue? = nil, _ handler: @escaping () -> Void) -> DispatchSourceRead {
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor?.rawValue ?? -1, queue: handlerQueue ?? queue)
        watch(source, handler, onOwnerQueue: handlerQueue == nil)
        return source
    }

    /// A write source on the socket (resumed by the caller); `handler` runs on the queue.
    func makeWriteSource(_ handler: @escaping () -> Void) -> DispatchSourceWrite {
        let source = DispatchSource.makeWriteSource(fileDescriptor: descriptor?.rawValue ?? -1, queue: queue)
        watch(source, handler, onOwnerQueue: true)
        return source
    }

    private func watch(_ source: DispatchSourceProtocol, _ handler: @escaping () -> Void, onOwnerQueue: Bool) {
        source.setEventHandler(handler: handler)
        // Strong: the socket must live until its descriptor is closed here. A source on another
        // queue reports its end on the owner's, where the count lives.
        if onOwnerQueue {
            source.setCancelHandler { self.sourceCancelled() }
        } else {
            let queue = self.queue
            source.setCancelHandler { queue.async { self.sourceCancelled() } }
        }
        openSources += 1
    }

    /// The descriptor's number while it is open, for a send to many sockets at once.
    var rawDescriptor: CInt? { descriptor?.rawValue }

    /// `send(2)` without waiting and without SIGPIPE.
    func send(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        do {
            guard let sent = try descriptor?.send(bytes, dontWait: true) else {
                return .failed(Errno.badFileDescriptor.with(call: "send"))
            }
            return .processed(sent)
        } catch {
            return IOResult(error)
        }
    }

    /// `recv(2)` without waiting. Callable from the read source's queue: the descriptor is
    /// closed only after that source has ended.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        do {
            guard let received = try descriptor?.receive(into: buffer, dontWait: true) else {
                return .failed(Errno.badFileDescriptor.with(call: "recv"))
            }
            return .processed(received)
        } catch {
            return IOResult(error)
        }
    }

    /// Ends the sending side (`shutdown(2)`): the peer reads end of file.
    func shutdownWrite() {
        descriptor?.shutdown(.write)
    }

    /// Closes the descriptor now, or when the last source on it has finished.
    func close() {
        closed = true
        closeIfUnwatched()
    }

    private func sourceCancelled() {
        openSources -= 1
        closeIfUnwatched()
    }

    private func closeIfUnwatched() {
        guard closed, openSources == 0, let descriptor = descriptor.take() else { return }
        try? descriptor.close()
    }
}
