import CSystemd
import ReachabilityCore

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
