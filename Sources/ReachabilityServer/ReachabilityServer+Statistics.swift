import ReachabilityCore

extension ReachabilityServer {
    /// Why the server closed a client's connection: the label `reason` of
    /// `reachd_connections_rejected_total`.
    public enum Rejection: String, CaseIterable, Sendable {
        /// A message over the size limit without its NUL terminator.
        case oversizedMessage = "oversized_message"
        /// Not JSON, not UTF-8, or not a varlink call.
        case malformedMessage = "malformed_message"
        /// More pipelined calls than `maxPendingCalls`.
        case tooManyPendingCalls = "too_many_pending_calls"
        /// A subscriber that stopped reading (`SubscriberTooSlow`).
        case subscriberTooSlow = "subscriber_too_slow"
        /// A client that stopped reading the replies to its calls.
        case repliesNotRead = "replies_not_read"

        /// The rejection a framing or decoding error of an incoming message stands for.
        init(_ error: any Error) {
            if case .messageTooLarge? = error as? VarlinkProtocolError {
                self = .oversizedMessage
            } else {
                self = .malformedMessage
            }
        }
    }

    /// The server's figures for metrics.
    public struct Statistics: Equatable, Sendable {
        /// Connections with a live subscription.
        public var subscribers: Int
        /// Connections closed on the client since start, by reason; every reason is present.
        public var rejections: [Rejection: Int]
    }

    /// The figures now. Waits for the server's queue, so call it from another queue (never one
    /// the server's queue waits for).
    public var statistics: Statistics {
        onQueue {
            var counts = Dictionary(uniqueKeysWithValues: Rejection.allCases.map { ($0, 0) })
            counts.merge(rejections) { _, new in new }
            return Statistics(subscribers: connections.values.reduce(0) { $0 + ($1.subscription != nil ? 1 : 0) },
                              rejections: counts)
        }
    }

    /// Counts one connection closed on its client (on the server's queue).
    func noteRejection(_ reason: Rejection) {
        rejections[reason, default: 0] += 1
    }
}
