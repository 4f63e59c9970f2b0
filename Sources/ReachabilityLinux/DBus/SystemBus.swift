import Dispatch
import ReachabilityCore
import ReachabilitySystem

/// What follows a service over `SystemBus` (`BusFollower`): told when the bus answered on a
/// new connection, and when it is gone.
protocol SystemBusFollower: AnyObject {
    /// The bus answered on `connection` (at start, or back after a loss): install the match
    /// rules and read the service afresh.
    func busConnected(_ connection: SDBusConnection)
    /// The connection is gone (or the bus stopped): what the service said is void.
    func busLost()
}

/// The one system-bus connection ModemManager, NetworkManager and logind are followed over: it
/// connects, and when the connection fails or is lost tries again with back-off (0.1 s doubling
/// to 5 s, `SystemBusState`); each time the bus answers on a new connection every follower reads
/// its service afresh. The loss and the return are each logged once, at notice.
///
/// Runs on `queue`, as do its followers (reachd: the monitor's queue, where what they learn is
/// used). Without a bus at all (containers) it says so once and keeps trying, cheaply.
public final class SystemBus: @unchecked Sendable, QueueConfined {
    public let queue: DispatchQueue
    package let queueConfinement: QueueConfinement
    private let address: String?
    private let log: LogSink
    /// Who speaks in the log ("dbus"; a source's own bus: the source's name).
    private let label: String
    /// What is followed over it, for the log ("ModemManager, NetworkManager and logind").
    private let followed: String
    private let onConnectedChange: @Sendable (Bool) -> Void
    // Confined to `queue`.
    private var state = SystemBusState()
    private var connection: SDBusConnection?
    /// The bus's own question on a new connection (`GetId`): its answer is the proof the bus works.
    private var probe: SDBusCalls<Void>?
    private var followers: [ObjectIdentifier: Weak] = [:]
    /// Bumped on every connect and stop, so that a retry timer of an older attempt does nothing.
    private var attempt = 0

    private struct Weak { weak var follower: (any SystemBusFollower)? }

    /// - Parameters:
    ///   - address: a D-Bus address instead of the system bus (tests); nil: the system bus, or
    ///     `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - queue: the serial queue the bus and its followers run on.
    ///   - label, followed: who speaks in the log lines, and what is followed over the bus.
    ///   - onConnectedChange: whether the followers follow now, on `queue`, at each change.
    public init(address: String? = nil, queue: DispatchQueue, log: LogSink = .discarding, label: String = "dbus",
                followed: String = "ModemManager, NetworkManager and logind",
                onConnectedChange: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.address = address
        self.queue = queue
        self.queueConfinement = QueueConfinement(queue)
        self.log = log
        self.label = label
        self.followed = followed
        self.onConnectedChange = onConnectedChange
    }

    /// Connects (and keeps reconnecting). Callable from any thread; a second call does nothing.
    public func start() {
        onQueue { perform(state.start()) }
    }

    /// Disconnects for good; the followers are told. Callable from any thread.
    public func stop() {
        onQueue {
            attempt += 1
            perform(state.stop())
            drop()
        }
    }

    /// Whether the bus answered on the current connection (the followers follow).
    public var isConnected: Bool { onQueue { state.isConnected } }

    /// Whether a connection is made or being made (not waiting to try again, not stopped).
    public var isTrying: Bool { onQueue { state.phase == .connecting || state.phase == .connected } }

    /// Adds a follower; when the bus is up it starts at once. On `queue`.
    func attach(_ follower: any SystemBusFollower) {
        followers[ObjectIdentifier(follower)] = Weak(follower: follower)
        if state.isConnected, let connection {
            follower.busConnected(connection)
            connection.pump()
        }
    }

    /// Removes a follower (which stops following by itself). On `queue`.
    func detach(_ follower: any SystemBusFollower) {
        followers[ObjectIdentifier(follower)] = nil
    }

    /// Lets sd-bus send what followers queued outside its callbacks. On `queue`.
    func pump() { connection?.pump() }

    // MARK: - Performing the state's actions

    private func perform(_ actions: [SystemBusState.Action]) {
        for action in actions {
            switch action {
            case .connect:
                connect()
            case .retry(let seconds):
                drop()
                attempt += 1
                let due = attempt
                queue.asyncAfter(deadline: .now() + seconds) { [weak self] in
                    guard let self, self.attempt == due else { return }
                    self.perform(self.state.retryDue())
                }
            case .startFollowers:
                onConnectedChange(true)
                guard let connection else { continue }
                // Inside sd-bus's processing (the bus's answer): what the followers queue is sent
                // when it returns, so no pump here (sd-bus refuses to be re-entered).
                for entry in followers.values { entry.follower?.busConnected(connection) }
                followers = followers.filter { $0.value.follower != nil }
            case .stopFollowers:
                onConnectedChange(false)
                for entry in followers.values { entry.follower?.busLost() }
            case .reportLost:
                log.notice("\(label): lost the D-Bus connection; \(followed) not followed until it is back (trying again every few seconds)")
            case .reportBack:
                log.notice("\(label): the system bus is back; reading \(followed) afresh")
            case .reportAbsent:
                log.notice("\(label): no D-Bus system bus (\(lastError ?? "no answer")); \(followed) not followed until it appears")
            }
        }
    }

    /// Why the last connect failed, for the first notice.
    private var lastError: String?

    private func connect() {
        drop()
        attempt += 1
        let current = attempt
        do {
            let connection = try SDBusConnection(address: address, queue: queue, onLost: { [weak self] error in
                guard let self, self.attempt == current else { return }
                self.lostConnection(error)
            })
            let probe = SDBusCalls<Void>()
            try probe.call(on: connection, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                           interface: "org.freedesktop.DBus", member: "GetId", values: [], for: ()) { [weak self] reply, _ in
                guard let self, self.attempt == current else { return }
                if let error = reply.error {
                    self.lostConnection(error)
                } else {
                    self.probe = nil
                    self.perform(self.state.connected())
                }
            }
            self.connection = connection
            self.probe = probe
            connection.pump()
        } catch {
            // Said once (the first time, with why); tries every few seconds after are quiet.
            lastError = "\(error)"
            perform(state.failed())
        }
    }

    private func lostConnection(_ error: SDBusError) {
        lastError = "\(error)"
        log.debug("\(label): connection failed: \(error)")
        perform(state.lost())
    }

    /// Lets the connection go (its driver first, so that nothing more is called back).
    private func drop() {
        probe = nil
        connection?.cancel()
        connection = nil
    }
}
