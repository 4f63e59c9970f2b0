import Dispatch
import ReachabilitySystem

/// A listening socket driven by a Dispatch read source: takes the pending connections in
/// bounded batches (so a connection storm cannot starve the queue's other work) and, when the
/// process is out of descriptors, pauses for 100 ms instead of spinning on a readable socket.
/// Shared by the varlink server and the metrics responder; confined to `queue`.
final class Acceptor: @unchecked Sendable {
    /// Why accepting stopped for this wake-up, for the owner's log.
    enum Failure {
        /// Out of descriptors (`EMFILE`, `ENFILE`): accepting is paused for 100 ms.
        case paused(Errno)
        /// Any other `accept(2)` error: tried again at the next wake-up.
        case failed(Errno)
    }

    private let queue: DispatchQueue
    private let batch: Int
    private var descriptor: FileDescriptor?
    private var source: DispatchSourceRead?
    private var paused = false
    private let onConnection: (consuming FileDescriptor) -> Void
    private let onFailure: (Failure) -> Void

    /// - Parameters:
    ///   - listening: a non-blocking listening socket; closed when the acceptor stops.
    ///   - batch: connections taken per wake-up at most.
    ///   - onConnection: a new connection, close-on-exec and non-blocking.
    init(_ listening: consuming FileDescriptor, queue: DispatchQueue, batch: Int,
         onConnection: @escaping (consuming FileDescriptor) -> Void, onFailure: @escaping (Failure) -> Void) {
        let fd = listening.rawValue
        self.descriptor = consume listening
        self.queue = queue
        self.batch = batch
        self.onConnection = onConnection
        self.onFailure = onFailure
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptPending() }
        // The descriptor is closed once the source no longer watches it.
        source.setCancelHandler { if let descriptor = self.descriptor.take() { try? descriptor.close() } }
        self.source = source
        source.resume()
    }

    /// Stops accepting and closes the listening socket.
    func stop() {
        guard let source else { return }
        // A suspended source never runs its cancel handler: resume it first.
        if paused { source.resume(); paused = false }
        source.cancel()
        self.source = nil
    }

    private func acceptPending() {
        for _ in 0..<batch {
            let accepted: FileDescriptor?
            do {
                accepted = try descriptor?.accept()
            } catch {
                switch error {
                case .wouldBlock, .connectionAborted:
                    return
                case .tooManyOpenFiles, .tooManyOpenFilesInSystem:
                    onFailure(.paused(error))
                    pause()
                    return
                default:
                    onFailure(.failed(error))
                    return
                }
            }
            guard let connection = accepted else { return }
            onConnection(connection)
        }
    }

    private func pause() {
        guard let source, !paused else { return }
        source.suspend()
        paused = true
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in
            guard let self, self.paused else { return }
            self.paused = false
            self.source?.resume()
        }
    }
}
