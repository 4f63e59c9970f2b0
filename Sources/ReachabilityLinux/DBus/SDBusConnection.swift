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

    /// Serves the object at `path` (`SDBusServedObject`) as long as the returned object lives.
    func serve(_ path: String, onCall: @escaping (SDBusMessage) -> Bool) throws(SDBusError) -> SDBusServedObject {
        try SDBusServedObject(bus: bus, path: path, onCall: onCall)
    }

    /// Writes out the calls queued (`SDBus.flush`).
    func flush() { bus.flush() }

    /// Stops driving the bus: nothing more is read or called back.
    func cancel() { driver.cancel() }

    /// Lets sd-bus do what it can now (send what was queued outside its own callbacks).
    func pump() { driver.pump() }
}
