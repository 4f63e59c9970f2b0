import FoundationEssentials

/// One connection's bytes waiting for the socket, bounded in messages and bytes: a subscriber
/// that stops reading fills it and is then dropped (`SubscriberTooSlow`) instead of making the
/// daemon buffer without end or wait for it.
///
/// A message is written in pieces as the socket takes them; a message that has started is always
/// finished (cutting it would corrupt the stream), so only messages not yet begun are dropped.
public struct OutgoingQueue: Sendable {
    /// The bounds. The defaults hold a few hundred events of a typical size.
    public struct Limits: Equatable, Sendable {
        public var maxMessages: Int
        public var maxBytes: Int

        public init(maxMessages: Int = 256, maxBytes: Int = 1 << 20) {
            self.maxMessages = maxMessages; self.maxBytes = maxBytes
        }

        /// Whether an empty queue takes a message of `size` bytes without `force`.
        public func admits(messageOf size: Int) -> Bool {
            maxMessages >= 1 && size <= maxBytes
        }
    }

    public enum EnqueueResult: Equatable, Sendable {
        case queued
        /// The queue was full: every message not yet begun, and this one, were dropped.
        case overflow(dropped: Int)
    }

    public let limits: Limits
    private var messages: [Data] = []
    private var first = 0
    /// Bytes of `messages[first]` already written.
    private var offset = 0
    public private(set) var byteCount = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public var isEmpty: Bool { first == messages.count }
    public var messageCount: Int { messages.count - first }

    /// Queues `message`, or reports overflow when it would exceed the limits.
    /// `force` queues regardless (the final error of a connection being dropped).
    public mutating func enqueue(_ message: Data, force: Bool = false) -> EnqueueResult {
        if !force && (messageCount + 1 > limits.maxMessages || byteCount + message.count > limits.maxBytes) {
            return .overflow(dropped: dropUnstarted() + 1)
        }
        messages.append(message)
        byteCount += message.count
        return .queued
    }

    /// Drops every message not yet begun; returns how many.
    public mutating func dropUnstarted() -> Int {
        guard !isEmpty else { return 0 }
        let keep = offset > 0 ? 1 : 0
        let dropped = messageCount - keep
        for message in messages[(first + keep)...] { byteCount -= message.count }
        messages.removeSubrange((first + keep)...)
        return dropped
    }

    /// Drops everything, a message begun included (the connection is closing); returns how many.
    public mutating func dropAll() -> Int {
        let dropped = messageCount
        messages.removeAll()
        first = 0; offset = 0; byteCount = 0
        return dropped
    }

    /// The unwritten bytes of the oldest message.
    public var head: Data? {
        guard !isEmpty else { return nil }
        let message = messages[first]
        return offset == 0 ? message : message.subdata(in: (message.startIndex + offset)..<message.endIndex)
    }

    /// Records that `count` bytes of `head` were written.
    public mutating func consume(_ count: Int) {
        guard !isEmpty else { return }
        offset += count
        byteCount -= count
        if offset >= messages[first].count {
            offset = 0
            first += 1
            if first > 64 && first * 2 > messages.count {
                messages.removeFirst(first); first = 0
            }
            if isEmpty { messages.removeAll(keepingCapacity: true); first = 0 }
        }
    }
}
