/// Where a component reads the time (`ClockReading`): injected, so that tests step the wall
/// clock apart from the one the timers run on. reachd uses `ReachdClock.system`
/// (ReachabilityLinux); tests make their own with `init(_:)`.
public struct ReachdClock: Sendable {
    private let read: @Sendable () -> ClockReading

    /// A clock that answers `read()` each time it is asked.
    public init(_ read: @escaping @Sendable () -> ClockReading) {
        self.read = read
    }

    /// The time now.
    public func now() -> ClockReading {
        read()
    }
}
