/// The one system-bus connection that ModemManager, NetworkManager and logind are followed
/// over, as a state machine (each event method returns the actions; `SystemBus` performs them):
/// when to connect, when to try again, when the followers start and stop, and what is said.
///
/// The rules:
/// - a connection counts once the bus has answered on it (sd-bus connects a Unix socket at
///   once, but a dbus-daemon on its way down or up may still drop it): only then are the
///   followers started, the delay reset and "back" said;
/// - a connection that fails or is lost is tried again after `firstDelay` (0.1 s), doubling
///   up to `maxDelay` (5 s) for as long as it fails, so a returning bus is followed within
///   5 s of its return and an absent one costs a connect every 5 s;
/// - the log says once that the bus is lost and once that it is back (a machine without a
///   system bus at all: once, at the first failure).
public struct SystemBusState: Equatable, Sendable {
    public static let firstDelay = 0.1
    public static let maxDelay = 5.0

    public enum Phase: Equatable, Sendable {
        /// Not started, or stopped.
        case idle
        /// A connection is made and the bus has not answered yet.
        case connecting
        /// The bus answered: the followers follow.
        case connected
        /// Waiting to try again.
        case waiting
    }

    public enum Action: Equatable, Sendable {
        /// Connect (and ask the bus something); report `connected()`, `failed()` or `lost()`.
        case connect
        /// Drop the connection (if any) and call `retryDue()` after `seconds`.
        case retry(after: Double)
        /// Start every follower afresh on the connection: install its match rules, read its service.
        case startFollowers
        /// Tell every follower the bus is gone (what it knew is void); drop the connection.
        case stopFollowers
        /// Log that the bus is gone (notice).
        case reportLost
        /// Log that the bus is back (notice).
        case reportBack
        /// Log that there is no bus to connect to (notice, once).
        case reportAbsent
    }

    public private(set) var phase: Phase = .idle
    /// The wait before the next try after a failure.
    public private(set) var delay = firstDelay
    /// The bus went away after answering, and "back" has not been said.
    public private(set) var lostReported = false
    /// No bus at the first try has been said.
    public private(set) var absentReported = false
    /// The bus answered at least once.
    public private(set) var everConnected = false

    public init() {}

    /// Whether the followers follow now (the metrics' gauge).
    public var isConnected: Bool { phase == .connected }

    public mutating func start() -> [Action] {
        guard phase == .idle else { return [] }
        phase = .connecting
        return [.connect]
    }

    /// The bus answered on the new connection.
    public mutating func connected() -> [Action] {
        guard phase == .connecting else { return [] }
        phase = .connected
        delay = Self.firstDelay
        everConnected = true
        var actions: [Action] = []
        if lostReported {
            lostReported = false
            actions.append(.reportBack)
        }
        return actions + [.startFollowers]
    }

    /// Connecting failed, or the connection died before the bus answered.
    public mutating func failed() -> [Action] {
        guard phase == .connecting else { return [] }
        phase = .waiting
        var actions: [Action] = []
        if !everConnected && !absentReported {
            absentReported = true
            actions.append(.reportAbsent)
        }
        actions.append(.retry(after: delay))
        delay = min(delay * 2, Self.maxDelay)
        return actions
    }

    /// The connection died after the bus had answered.
    public mutating func lost() -> [Action] {
        switch phase {
        case .connecting:
            return failed()
        case .connected:
            phase = .waiting
            lostReported = true
            delay = min(Self.firstDelay * 2, Self.maxDelay)
            return [.stopFollowers, .reportLost, .retry(after: Self.firstDelay)]
        case .idle, .waiting:
            return []
        }
    }

    /// The wait of `retry` is over.
    public mutating func retryDue() -> [Action] {
        guard phase == .waiting else { return [] }
        phase = .connecting
        return [.connect]
    }

    /// Stopping: the followers are told when they followed.
    public mutating func stop() -> [Action] {
        let wasConnected = phase == .connected
        phase = .idle
        delay = Self.firstDelay
        return wasConnected ? [.stopFollowers] : []
    }
}
