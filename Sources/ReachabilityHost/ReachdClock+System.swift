import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

extension ReachdClock {
    /// The machine's clocks: `Date()` for the wall, `CLOCK_BOOTTIME` for the timers (it never
    /// steps, and it counts the time the machine slept).
    public static let system = ReachdClock {
        ClockReading(wall: Date(), uptime: bootTimeSeconds())
    }

    /// Seconds of `CLOCK_BOOTTIME` (`BootClock`).
    public static func bootTimeSeconds() -> TimeInterval {
        BootClock.seconds()
    }
}
