import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// One connection to the metrics responder: read a request head, answer it, close. Confined to
/// the server's queue.
final class MetricsHTTPConnection: @unchecked Sendable {
    let id: Int
    /// The client's address, for the per-address bound; nil if the kernel would not tell.
    let peer: IPAddress?
    private let socket: ConnectionSocket
    unowned let server: MetricsHTTPServer
    private var received: [UInt8] = []
    private var answer: [UInt8] = []
    private var answered = 0
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var timers: [DispatchSourceTimer] = []
    private var responding = false
    /// The whole answer is sent.
    private var finished = false
    /// Bytes read and dropped after the request.
    private var drained = 0
    private static let maxDrained = 64 * 1024
    private(set) var closed = false

    /// No complete request head yet (and not closed): what may make room for a new connection.
    var waitingForRequest: Bool { !closed && !responding }

    init(id: Int, peer: IPAddress?, socket: ConnectionSocket, server: MetricsHTTPServer) {
        self.id = id
        self.peer = peer
        self.socket = socket
        self.server = server
    }

    func start() {
        let source = socket.makeReadSource { [weak self] in self?.readAvailable() }
        readSource = source
        source.resume()
        // A head that has not arrived in time gets 408; an exchange over its time is cut off.
        after(server.configuration.requestTimeout) { [weak self] in
            guard let self, !self.responding else { return }
            self.respond(MetricsHTTPExchange.plain(408, "request timeout\n"))
        }
        after(server.configuration.connectionTimeout) { [weak self] in self?.close() }
    }

    private func after(_ interval: DispatchTimeInterval, _ handler: @escaping () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: server.queue)
        timer.schedule(deadline: .now() + interval)
        timer.setEventHandler(handler: handler)
        timer.resume()
        timers.append(timer)
    }

    private func readAvailable() {
        guard !closed else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count: Int
        switch buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) {
        case .processed(let received): count = received
        case .wouldBlock: return
        case .failed: return close()
        }
        if responding {
            // Lingering: what comes after the request is read and dropped, so that closing with
            // unread bytes does not reset the connection before the client has read the answer.
            drained += count
            if count == 0 || drained > Self.maxDrained {
                if finished { return close() }
                stopReading()
            }
            return
        }
        if count == 0 { return close() }
        let chunk = buffer[0..<count]
        received.append(contentsOf: chunk)
        // Parse the first bytes (junk is refused at once), then only when the head may have ended
        // or grown too big: a client dribbling bytes one by one costs a scan per line, not per byte.
        let first = received.count == chunk.count
        guard first || chunk.contains(UInt8(ascii: "\n")) || received.count > MetricsHTTPExchange.maxHeadBytes else { return }
        let request = MetricsHTTPExchange.parse(received)
        guard let response = server.respond(to: request) else { return }
        respond(response)
    }

    private func respond(_ response: MetricsHTTPExchange.Response) {
        guard !closed, !responding else { return }
        responding = true
        received = []
        answer = response.bytes
        flush()
    }

    private func stopReading() {
        readSource?.cancel()
        readSource = nil
    }

    private func flush() {
        while answered < answer.count {
            switch answer[answered...].withUnsafeBytes({ socket.send($0) }) {
            case .processed(let written) where written > 0:
                answered += written
            case .wouldBlock:
                waitForWritable()
                return
            case .processed, .failed:
                return close()
            }
        }
        writeSource?.cancel()
        writeSource = nil
        finished = true
        // All sent: end our side so the client's read ends; close when the client closes its
        // side (or the connection's time is up).
        socket.shutdownWrite()
        if readSource == nil { return close() }
        after(.seconds(1)) { [weak self] in self?.close() }
    }

    private func waitForWritable() {
        guard writeSource == nil else { return }
        let source = socket.makeWriteSource { [weak self] in self?.flush() }
        writeSource = source
        source.resume()
    }

    func close() {
        guard !closed else { return }
        closed = true
        for timer in timers { timer.cancel() }
        timers = []
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        server.connectionClosed(self)
        socket.close()
    }
}
