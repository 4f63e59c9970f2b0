import CSystemd

/// An object reachd serves on a connection (`sd_bus_add_object`): every method call to its path
/// goes to `onCall`, which says whether it handled it; a handled call that expects a reply gets
/// an empty one, an unhandled one sd-bus's `UnknownMethod`. Like `SDBusSignalMatches`, a
/// capture-free C callback whose userdata is this object; the object is served as long as this
/// lives, on the queue that drives the bus.
final class SDBusServedObject {
    private let onCall: (SDBusMessage) -> Bool
    private var slot: SDBusSlot?

    init(bus: SDBus, path: String, onCall: @escaping (SDBusMessage) -> Bool) throws(SDBusError) {
        self.onCall = onCall
        slot = try bus.addObject(path, callback: Self.handler, userdata: Unmanaged.passUnretained(self).toOpaque())
    }

    private static let handler: SDBusHandler = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let object = Unmanaged<SDBusServedObject>.fromOpaque(userdata).takeUnretainedValue()
        guard object.onCall(SDBusMessage(borrowing: message)) else { return 0 }
        if sd_bus_message_get_expect_reply(message) > 0 {
            var reply: OpaquePointer?
            if sd_bus_message_new_method_return(message, &reply) >= 0, let reply {
                _ = sd_bus_send(sd_bus_message_get_bus(message), reply, nil)
                sd_bus_message_unref(reply)
            }
        }
        return 1
    }
}
