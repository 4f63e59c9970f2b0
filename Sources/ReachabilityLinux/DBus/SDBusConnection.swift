import CSystemd
import Dispatch
import ReachabilityCore

/// One receiver's connection to a bus, run on the receiver's serial queue: the bus, the Dispatch
/// sources that drive it (`SDBusDispatchDriver`), the receiver's match rules
/// (`SDBusSignalMatches`) and its method calls in flight, each with what its reply is for.
/// Releasing it disconnects: the calls are cancelled (their slots released), the rules removed,
/// the sources cancelled. Every callback runs on `queue`. ModemManagerSource and
/// LogindSleepMonitor each hold one while connected.
final class SDBusConnection<CallPurpose> {
    /// Method calls time out after this long: a hung service must not leave us waiting sd-bus's
    /// default 25 s.
    static var callTimeoutMicroseconds: UInt64 { 10_000_000 }

    private let bus: SDBus
    private let driver: SDBusDispatchDriver
    private var matches: SDBusSignalMatches?
    private var calls: [ObjectIdentifier: (purpose: CallPurpose, record: SDBusPendingCall)] = [:]

    /// Connects and installs `rules` (their answers, and then the signals, come once `pump()` runs).
    /// - Parameters:
    ///   - address: a D-Bus address (`unix:path=…`); nil: the system bus, or
    ///     `DBUS_SYSTEM_BUS_ADDRESS` when set.
    ///   - onSignal: each signal that matches one of `rules`.
    ///   - onRefused: a rule the bus refused.
    ///   - onLost: sd-bus failed, the connection is gone; the receiver lets this object go.
    init(address: String?, queue: DispatchQueue, rules: [String], onSignal: @escaping (SDBusMessage) -> Void,
         onRefused: @escaping (SDBusError) -> Void, onLost: @escaping (SDBusError) -> Void) throws(SDBusError) {
        bus = if let address { try SDBus.connect(address: address) } else { try SDBus.system() }
        driver = try SDBusDispatchDriver(bus: bus, queue: queue, onFailure: onLost)
        matches = try SDBusSignalMatches(bus: bus, rules: rules, onSignal: onSignal, onRefused: onRefused)
    }

    deinit {
        calls = [:]
        matches = nil
        driver.cancel()
    }

    /// Calls `member` with string `arguments`, never starting the service by bus activation
    /// (reachd only follows the services it asks); `onReply` gets the reply (or sd-bus's time-out
    /// error) and `purpose`, after the call is forgotten here.
    func call(destination: String, path: String, interface: String, member: String, arguments: [String] = [],
              for purpose: CallPurpose, onReply: @escaping (SDBusMessage, CallPurpose) -> Void) throws(SDBusError) {
        try call(destination: destination, path: path, interface: interface, member: member,
                 values: arguments.map(DBusValue.string), for: purpose, onReply: onReply)
    }

    /// Like `call(…arguments:…)`, with arguments of any type (`SDBusMessage.append(_:)`).
    func call(destination: String, path: String, interface: String, member: String, values: [DBusValue],
              for purpose: CallPurpose, onReply: @escaping (SDBusMessage, CallPurpose) -> Void) throws(SDBusError) {
        let message = try bus.methodCall(destination: destination, path: path, interface: interface, member: member)
        message.setAutoStart(false)
        for value in values { try message.append(value) }
        let record = SDBusPendingCall()
        let key = ObjectIdentifier(record)
        record.onReply = { [weak self] reply in
            self?.calls[key] = nil
            onReply(reply, purpose)
        }
        record.slot = try bus.callAsync(message, callback: sdBusPendingCallReplied,
                                        userdata: Unmanaged.passUnretained(record).toOpaque(),
                                        timeoutMicroseconds: Self.callTimeoutMicroseconds)
        calls[key] = (purpose, record)
    }

    /// What the calls in flight are for.
    var callsInFlight: [CallPurpose] { calls.values.map(\.purpose) }

    /// Cancels every call in flight (their answers would come from an owner left behind).
    func cancelCalls() { calls = [:] }

    /// Lets sd-bus do what it can now (send what was queued outside its own callbacks).
    func pump() { driver.pump() }
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
