import ReachabilityCore

extension ReachabilityServer {
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
            return Statistics(subscribers: subscribers.count,
                              rejections: counts)
        }
    }

}
