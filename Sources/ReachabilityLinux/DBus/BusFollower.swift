import Dispatch
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

/// Follows one service on a `SystemBus`: the one type behind ModemManager, NetworkManager and
/// logind. On every (re)connection it installs `NameOwnerChanged` for the service's name and the
/// service's own `rules`, then calls `onConnected` (which reads the service afresh); it keeps
/// the owner's unique name, believes signals only from that owner (any local peer can send a
/// look-alike, addressed to reachd, and match rules do not filter it) and `NameOwnerChanged`
/// only from the bus itself, and cancels the calls in flight when the owner changes or the bus
/// goes. All on the bus's queue.
final class BusFollower<CallPurpose>: SystemBusFollower {
    /// For log lines: "ModemManager", "NetworkManager", "sleep".
    let label: String
    /// The well-known name followed.
    let service: String
    private let rules: [String]
    private let log: LogSink
    let bus: SystemBus

    /// The bus answered on a new connection: read the service (`GetManagedObjects`, `GetNameOwner`).
    var onConnected: () -> Void = {}
    /// The bus says the service's name has a new owner (nil: it left); the calls in flight are
    /// cancelled already and `owner` is nil until the follower sets it from an answer.
    var onOwnerChanged: (_ newOwner: String?) -> Void = { _ in }
    /// A signal of `rules` from the service's current owner.
    var onSignal: (SDBusMessage) -> Void = { _ in }
    /// A signal of `rules` from anyone else (before the owner is known, too).
    var onIgnored: (SDBusMessage) -> Void = { _ in }
    /// The bus is gone (or the follower stopped): what the service said is void.
    var onLost: () -> Void = {}
    /// An object of reachd's own the service calls (an agent), served on every connection, and
    /// what handles its method calls (true: handled). Only the service's current owner is
    /// believed: a call from anyone else is refused unhandled.
    var served: (path: String, onCall: (SDBusMessage) -> Bool)?

    /// The service's unique name, once an answer or the bus said it; signals count only from it.
    var owner: String?
    private var connection: SDBusConnection?
    private var matches: SDBusSignalMatches?
    private var servedObject: SDBusServedObject?
    private var calls = SDBusCalls<CallPurpose>()
    private var reportedForged = false
    private var attached = false

    /// - Parameter rules: the service's signals, each with `sender='SERVICE'` (the
    ///   `NameOwnerChanged` rule is added here).
    init(bus: SystemBus, label: String, service: String, rules: [String], log: LogSink) {
        self.bus = bus
        self.label = label
        self.service = service
        self.rules = rules
        self.log = log
    }

    /// The bus's `NameOwnerChanged` for the service, installed before anything is asked, so no
    /// change between an answer and the first signal is missed (the bus keeps the order).
    var allRules: [String] {
        ["type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0='\(service)'"] + rules
    }

    /// Follows from now on (at once when the bus is up). On the bus's queue.
    func start() {
        guard !attached else { return }
        attached = true
        bus.attach(self)
    }

    /// Stops following; `onLost` is called when it followed. On the bus's queue.
    func stop() {
        guard attached else { return }
        attached = false
        bus.detach(self)
        if connection != nil { busLost() }
    }

    /// Whether the bus is up for this follower.
    var isConnected: Bool { connection != nil }

    func busConnected(_ connection: SDBusConnection) {
        drop()
        do {
            matches = try connection.addMatches(allRules, onSignal: { [weak self] in self?.handle($0) },
                                                onRefused: { [weak self] in self?.refused($0) })
        } catch {
            log.warning("\(label): cannot install match rules: \(error)")
            return
        }
        if let served {
            do {
                servedObject = try connection.serve(served.path) { [weak self] message in
                    guard let self, let owner = self.owner, message.sender == owner else { return false }
                    return served.onCall(message)
                }
            } catch {
                log.warning("\(label): cannot serve \(served.path): \(error)")
            }
        }
        self.connection = connection
        onConnected()
    }

    func busLost() {
        drop()
        onLost()
    }

    private func drop() {
        calls.cancelAll()
        matches = nil
        servedObject = nil
        connection = nil
        owner = nil
    }

    private func refused(_ error: SDBusError) {
        log.warning("\(label): the bus refused a match rule: \(error)")
    }

    // MARK: - Calls

    /// Calls `member` of the service (`destination` another name, e.g. the bus's own), tracked
    /// so that an owner change or the bus's loss cancels it.
    func call(_ purpose: CallPurpose, destination: String? = nil, path: String, interface: String, member: String,
              values: [DBusValue] = [], onReply: @escaping (SDBusMessage, CallPurpose) -> Void) throws(SDBusError) {
        guard let connection else { throw SDBusError(function: "\(label): \(member)", errno: ENOTCONN) }
        try calls.call(on: connection, destination: destination ?? service, path: path, interface: interface, member: member,
                       values: values, for: purpose, onReply: onReply)
    }

    /// `GetNameOwner` of the service: `onReply` gets its unique name, or nil (not running, or an
    /// error, logged unless it is `NameHasNoOwner`).
    func askOwner(_ purpose: CallPurpose, onReply: @escaping (String?) -> Void) throws(SDBusError) {
        try call(purpose, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 member: "GetNameOwner", values: [.string(service)]) { [weak self] reply, _ in
            guard let self else { return }
            if let error = reply.error {
                if error.name != "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    self.log.warning("\(self.label): GetNameOwner(\(self.service)) failed: \(error)")
                }
                onReply(nil)
                return
            }
            onReply((try? reply.readAll())?.first?.string)
        }
    }

    /// What the calls in flight are for.
    var callsInFlight: [CallPurpose] { calls.inFlight }

    /// Cancels the calls in flight.
    func cancelCalls() { calls.cancelAll() }

    /// Lets sd-bus send what was queued outside its callbacks.
    func pump() { connection?.pump() }

    /// Writes out what was queued, waiting for the socket: the last calls before `stop()`.
    func flush() { connection?.flush() }

    // MARK: - Signals

    private func handle(_ message: SDBusMessage) {
        guard let member = message.member else { return }
        if member == "NameOwnerChanged" && message.interface == "org.freedesktop.DBus" {
            // Only the bus itself tells who owns a name; believing a peer's look-alike would
            // drop what the service said and ignore the real one from then on.
            guard message.sender == "org.freedesktop.DBus", message.path == "/org/freedesktop/DBus" else {
                reportForged(member, from: message.sender, not: "the bus")
                return
            }
            guard let arguments = try? message.readAll(), arguments.count == 3,
                  arguments[0].string == service, let newOwner = arguments[2].string else { return }
            // Whatever was pending was asked of the previous owner.
            calls.cancelAll()
            owner = nil
            onOwnerChanged(newOwner.isEmpty ? nil : newOwner)
            return
        }
        guard let owner, message.sender == owner else {
            onIgnored(message)
            return
        }
        onSignal(message)
    }

    /// A signal that claims to be the bus's or the service's and is not: logged once.
    func reportForged(_ member: String, from sender: String?, not whom: String) {
        guard !reportedForged else { return }
        reportedForged = true
        log.warning("\(label): ignoring \(member) from \(sender ?? "an unknown sender"), not \(whom)")
    }
}
