import Dispatch

/// One receiver's connection to a bus, run on the receiver's serial queue: the bus, the Dispatch
/// sources that drive it (`SDBusDispatchDriver`), the receiver's match rules
/// (`SDBusSignalMatches`) and its method calls in flight (`SDBusPendingCalls`). Releasing it
/// disconnects: the calls are cancelled, the rules removed, the sources cancelled. Every callback
/// runs on `queue`. ModemManagerSource and LogindSleepMonitor each hold one while connected.
final class SDBusConnection<CallPurpose> {
    let bus: SDBus
    private let driver: SDBusDispatchDriver
    private var matches: SDBusSignalMatches?
    private var calls = SDBusPendingCalls<CallPurpose>()

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
        calls.removeAll()
        matches = nil
        driver.cancel()
    }

    /// Sends `message`; `onReply` gets its reply (or sd-bus's time-out error) and `purpose`.
    func send(_ message: SDBusMessage, for purpose: CallPurpose, timeoutMicroseconds: UInt64,
              onReply: @escaping (SDBusMessage, CallPurpose) -> Void) throws(SDBusError) {
        try calls.send(message, on: bus, for: purpose, timeoutMicroseconds: timeoutMicroseconds, onReply: onReply)
    }

    /// What the calls in flight are for.
    var callsInFlight: [CallPurpose] { calls.purposes }

    /// Cancels every call in flight: no reply comes for them.
    func cancelCalls() { calls.removeAll() }

    /// Lets sd-bus do what it can now (send what was queued outside its own callbacks).
    func pump() { driver.pump() }
}
