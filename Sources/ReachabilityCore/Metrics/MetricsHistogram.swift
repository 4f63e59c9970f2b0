/// A Prometheus histogram: observations counted into fixed buckets, with their sum and count.
/// Buckets are kept per interval and made cumulative (`le`) only when rendered.
public struct MetricsHistogram: Equatable, Sendable {
    /// Bucket upper bounds in seconds for HTTP round trips: a LAN answers in milliseconds, a
    /// satellite or 2G link in seconds, and the check times out after `Timeout=` (5 s by default).
    public static let probeDurationBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Upper bounds, ascending; the implicit `+Inf` bucket is not listed.
    public let upperBounds: [Double]
    /// Observations per interval: `counts[i]` for `(upperBounds[i-1], upperBounds[i]]`, and one
    /// more for above the last bound.
    public private(set) var counts: [Int]
    public private(set) var sum: Double = 0
    public private(set) var count: Int = 0

    public init(upperBounds: [Double] = MetricsHistogram.probeDurationBounds) {
        self.upperBounds = upperBounds.sorted()
        counts = Array(repeating: 0, count: upperBounds.count + 1)
    }

    /// Counts one observation. Negative or non-finite values (a clock step) are not counted.
    public mutating func observe(_ value: Double) {
        guard value.isFinite, value >= 0 else { return }
        let index = upperBounds.firstIndex { value <= $0 } ?? upperBounds.count
        counts[index] += 1
        sum += value
        count += 1
    }

    /// `(le, cumulative count)` per bucket, ending with `(+Inf, count)`.
    public var cumulativeBuckets: [(upperBound: Double, count: Int)] {
        var running = 0
        var result: [(upperBound: Double, count: Int)] = []
        for (index, bound) in upperBounds.enumerated() {
            running += counts[index]
            result.append((bound, running))
        }
        result.append((.infinity, count))
        return result
    }
}
