/// Cuts a varlink byte stream into messages at NUL bytes: a message may arrive split across
/// reads, several may arrive in one read. More than `limit` bytes without a NUL is an error, after
/// which the stream is unusable (the connection is closed).
public struct VarlinkFramer: Sendable {
    public let limit: Int
    private var buffer: [UInt8] = []
    /// Start of the unconsumed part of `buffer`; compacted lazily so a read with many messages
    /// does not shift the buffer once per message.
    private var start = 0
    /// Where the NUL search resumes: bytes before it are known not to contain a NUL.
    private var scanned = 0

    public init(limit: Int = Varlink.maxMessageSize) {
        self.limit = limit
    }

    /// Bytes received but not yet part of a complete message.
    public var pendingByteCount: Int { buffer.count - start }

    /// Appends received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start == buffer.count {
            // A buffer that grew for one big message gives its memory back (thousands of connections).
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024); start = 0; scanned = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message (without its NUL), nil when none is complete yet.
    /// Throws `messageTooLarge` when the pending bytes exceed `limit` without a NUL.
    public mutating func next() throws -> [UInt8]? {
        var index = max(scanned, start)
        while index < buffer.count {
            if buffer[index] == 0 {
                if index - start > limit { throw VarlinkProtocolError.messageTooLarge(limit: limit) }
                let message = Array(buffer[start..<index])
                start = index + 1
                scanned = start
                compactIfWorthIt()
                return message
            }
            index += 1
        }
        scanned = index
        if buffer.count - start > limit { throw VarlinkProtocolError.messageTooLarge(limit: limit) }
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024); start = 0; scanned = 0
        }
        return nil
    }

    /// Appends bytes and returns every message they complete.
    public mutating func messages(after bytes: some Sequence<UInt8>) throws -> [[UInt8]] {
        append(bytes)
        var result: [[UInt8]] = []
        while let message = try next() { result.append(message) }
        return result
    }

    private mutating func compactIfWorthIt() {
        guard start > 4096 && start * 2 > buffer.count else { return }
        buffer.removeFirst(start)
        scanned -= start
        start = 0
    }
}
