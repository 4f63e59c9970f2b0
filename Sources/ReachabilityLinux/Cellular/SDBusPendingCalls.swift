import CSystemd

/// Method calls in flight on one bus (`sd_bus_call_async`), each with what its reply is for.
/// They share one capture-free C callback whose userdata is the call's own record; a reply (or
/// sd-bus's timeout error) goes to the handler given with the call, after the call is forgotten
/// here. `removeAll()`, or dropping this object, releases the calls' slots, which cancels them: no
/// reply comes for those. sd-bus calls back from `sd_bus_process`, on the queue that drives the
/// bus, so the owner uses this object on that queue only.
final class SDBusPendingCalls<Purpose> {
    private var calls: [ObjectIdentifier: (purpose: Purpose, record: SDBusPendingCall)] = [:]

    /// What the calls in flight are for.
    var purposes: [Purpose] { calls.values.map(\.purpose) }

    /// Sends `message`; `onReply` gets its reply and `purpose` once it comes.
    func send(_ message: SDBusMessage, on bus: SDBus, for purpose: Purpose, timeoutMicroseconds: UInt64,
              onReply: @escaping (SDBusMessage, Purpose) -> Void) throws(SDBusError) {
        let record = SDBusPendingCall()
        let key = ObjectIdentifier(record)
        record.onReply = { [weak self] reply in
            self?.calls[key] = nil
            onReply(reply, purpose)
        }
        record.slot = try bus.callAsync(message, callback: sdBusPendingCallReplied,
                                        userdata: Unmanaged.passUnretained(record).toOpaque(),
                                        timeoutMicroseconds: timeoutMicroseconds)
        calls[key] = (purpose, record)
    }

    /// Cancels every call in flight (their answers would come from a bus or owner left behind).
    func removeAll() { calls = [:] }
}

/// One call's record: its slot (the call is cancelled when the record goes) and its handler.
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
