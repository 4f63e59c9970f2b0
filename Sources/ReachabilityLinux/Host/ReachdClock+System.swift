import FoundationEssentials
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

extension ReachdClock {
    /// The machine's clocks: `Date()` for the wall, `CLOCK_BOOTTIME` for the timers (it never
    /// steps, and it counts the time the machine slept).
    public static let system = ReachdClock {
        ClockReading(wall: Date(), uptime: bootTimeSeconds())
    }

    /// Seconds of `CLOCK_BOOTTIME`.
    public static func bootTimeSeconds() -> TimeInterval {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return TimeInterval(now.tv_sec) + TimeInterval(now.tv_nsec) / 1e9
    }
}
