import CSystemd
import Dispatch
import ReachabilityCore

/// A connection to a bus, run on one serial queue: the bus and the Dispatch sources that drive
/// it (`SDBusDispatchDriver`). Receivers add their match rules (`addMatches`, kept by the
/// receiver) and make calls through their own `SDBusCalls`. Releasing it (and the receivers'
/// matches and calls) disconnects. Every callback runs on `queue`. `SystemBus` holds the one
/// that ModemManager, NetworkManager and logind are followed over.
final class SDBusConnection {
    /// Method calls time out after this long: a hung service must not leave us waiting sd-bus's
    /// default 25 s.
    static var callTimeoutMicroseconds: UInt64 { 10_000_000 }

    let bus: SDBus
    private let driver: SDBusDispatchDriver

    /// Connects.
    /// - Parameters:
    ///   - address: a D-Bus address (`unix:path=…`); nil: the system bus, or
    ///     `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - onLost: sd-bus failed, the connection is gone; the owner lets this object go.
    init(address: String?, queue: DispatchQueue, onLost: @escaping (SDBusError) -> Void) throws(SDBusError) {
        bus = if let address { try SDBus.connect(address: address) } else { try SDBus.system() }
        driver = try SDBusDispatchDriver(bus: bus, queue: queue, onFailure: onLost)
    }

    deinit {
        driver.cancel()
    }

    /// Installs `rules` (their answers, and then the signals, come once `pump()` runs); they
    /// last as long as the returned object.
    /// - Parameters:
    ///   - onSignal: each signal that matches one of `rules`.
    ///   - onRefused: a rule the bus refused.
    func addMatches(_ rules: [String], onSignal: @escaping (SDBusMessage) -> Void,
                    onRefused: @escaping (SDBusError) -> Void) throws(SDBusError) -> SDBusSignalMatches {
        try SDBusSignalMatches(bus: bus, rules: rules, onSignal: onSignal, onRefused: onRefused)
    }

    /// Stops driving the bus: nothing more is read or called back.
    func cancel() { driver.cancel() }

    /// Lets sd-bus do what it can now (send what was queued outside its own callbacks).
    func pump() { driver.pump() }
}

/// One receiver's method calls in flight on a connection, each with what its reply is for.
/// Releasing it (or `cancelAll()`) cancels them: their slots are released, no reply comes.
final class SDBusCalls<CallPurpose> {
    private var calls: [ObjectIdentifier: (purpose: CallPurpose, record: SDBusPendingCall)] = [:]

    /// Calls `member` with `values` (`SDBusMessage.append(_:)`) on `connection`, never starting
    /// the service by bus activation (reachd only follows the services it asks); `onReply`
    /// gets the reply (or sd-bus's time-out error) and `purpose`, after the call is forgotten here.
    func call(on connection: SDBusConnection, destination: String, path: String, interface: String, member: String,
              values: [DBusValue], for purpose: CallPurpose,
              onReply: @escaping (SDBusMessage, CallPurpose) -> Void) throws(SDBusError) {
        let message = try connection.bus.methodCall(destination: destination, path: path, interface: interface, member: member)
        message.setAutoStart(false)
        for value in values { try message.append(value) }
        let record = SDBusPendingCall()
        let key = ObjectIdentifier(record)
        record.onReply = { [weak self] reply in
            self?.calls[key] = nil
            onReply(reply, purpose)
        }
        record.slot = try connection.bus.callAsync(message, callback: sdBusPendingCallReplied,
                                                   userdata: Unmanaged.passUnretained(record).toOpaque(),
                                                   timeoutMicroseconds: SDBusConnection.callTimeoutMicroseconds)
        calls[key] = (purpose, record)
    }

    /// What the calls in flight are for.
    var inFlight: [CallPurpose] { calls.values.map(\.purpose) }

    /// Cancels every call in flight (their answers would come from an owner left behind, or
    /// a connection that is gone).
    func cancelAll() { calls = [:] }
}

/// One call's record, the C callback's userdata: its slot (the call is cancelled when the record
/// goes) and its handler.
private final class SDBusPendingCall {
    var slot: SDBusSlot?
    var onReply: (SDBusMessage) -> Void = { _ in }
}

private let sdBusPendingCallReplied: SDBusHandler = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    let record = Unmanaged<SDBusPendingCall>.fromOpaque(userdata).takeUnretainedValue()
    // The handler forgets the record; it stays alive until the handler returns, and sd-bus holds
    // its own reference to the slot while this runs.
    withExtendedLifetime(record) { record.onReply(SDBusMessage(borrowing: message)) }
    return 0
}
