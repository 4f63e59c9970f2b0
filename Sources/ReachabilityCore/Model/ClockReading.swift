import FoundationEssentials

/// One moment on reachd's two clocks: the wall clock, for what people read (`checkedAt`,
/// `since`, event timestamps), and a clock that never steps, for every interval, lifetime, hold
/// and backoff. Setting the date, NTP's first sync or a daylight-saving mistake steps the wall
/// clock by hours; none of that may fire a timer, skip one or stretch a backoff.
public struct ClockReading: Equatable, Sendable {
    /// Wall-clock time, for display only.
    public var wall: Date
    /// Seconds since boot (`CLOCK_BOOTTIME` in reachd: it runs on while the machine sleeps, so
    /// a verdict from before a sleep is as old as it really is).
    public var uptime: TimeInterval

    public init(wall: Date, uptime: TimeInterval) {
        self.wall = wall
        self.uptime = uptime
    }

    /// `seconds` later on both clocks: time passing.
    public func adding(_ seconds: TimeInterval) -> ClockReading {
        ClockReading(wall: wall.addingTimeInterval(seconds), uptime: uptime + seconds)
    }

    /// The wall clock stepped by `seconds`, the other clock not moved: someone set the time.
    public func steppingWall(by seconds: TimeInterval) -> ClockReading {
        ClockReading(wall: wall.addingTimeInterval(seconds), uptime: uptime)
    }

    /// Seconds from `earlier` to this reading on the clock that never steps.
    public func seconds(since earlier: ClockReading) -> TimeInterval {
        uptime - earlier.uptime
    }
}
