import CSystemd
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// An sd-bus failure: the C function, its negative-errno result as text, and the D-Bus error
/// name and message when the bus or the peer sent one.
public struct SDBusError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The sd-bus function that failed (`sd_bus_open_system`, …) or `reply` for an error reply.
    public let function: String
    /// The positive errno (`ENOENT`, …); 0 for an error reply without one.
    public let errno: Int32
    /// The D-Bus error name (`org.freedesktop.DBus.Error.ServiceUnknown`, …), if any.
    public let name: String?
    public let message: String?

    public init(function: String, errno: Int32, name: String? = nil, message: String? = nil) {
        self.function = function; self.errno = errno; self.name = name; self.message = message
    }

    /// From an sd-bus return value `result < 0` (`-errno`).
    init(_ function: String, _ result: Int32) {
        self.init(function: function, errno: -result)
    }

    public var description: String {
        var text = "\(function): "
        if let name { text += name + (message.map { ": \($0)" } ?? "") } else { text += Errno(rawValue: errno).text }
        if name != nil && errno != 0 { text += " (\(Errno(rawValue: errno).text))" }
        return text
    }
}

/// The C signature of every sd-bus message callback (`sd_bus_message_handler_t`).
typealias SDBusHandler = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<sd_bus_error>?) -> Int32

/// A bus connection (`sd_bus *`), owned: closed and released on deinit.
///
/// Thin: every method is one sd-bus call and names it. Not thread-safe (sd-bus isn't): the owner
/// confines it to one queue.
final class SDBus {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    /// The system bus, `sd_bus_open_system` (honours `DBUS_SYSTEM_BUS_ADDRESS`).
    static func system() throws(SDBusError) -> SDBus {
        var bus: OpaquePointer?
        let result = sd_bus_open_system(&bus)
        guard result >= 0, let bus else { throw SDBusError("sd_bus_open_system", result) }
        return SDBus(pointer: bus)
    }

    /// A bus at `address` (`unix:path=…`), as a bus client (sends `Hello`):
    /// `sd_bus_new` + `sd_bus_set_address` + `sd_bus_set_bus_client` + `sd_bus_start`.
    static func connect(address: String) throws(SDBusError) -> SDBus {
        var raw: OpaquePointer?
        var result = sd_bus_new(&raw)
        guard result >= 0, let raw else { throw SDBusError("sd_bus_new", result) }
        let bus = SDBus(pointer: raw)
        result = sd_bus_set_address(raw, address)
        guard result >= 0 else { throw SDBusError(function: "sd_bus_set_address(\(address))", errno: -result) }
        result = sd_bus_set_bus_client(raw, 1)
        guard result >= 0 else { throw SDBusError("sd_bus_set_bus_client", result) }
        result = sd_bus_start(raw)
        guard result >= 0 else { throw SDBusError(function: "sd_bus_start(\(address))", errno: -result) }
        return bus
    }

    deinit { sd_bus_close_unref(pointer) }

    /// The socket to watch, `sd_bus_get_fd`.
    func fileDescriptor() throws(SDBusError) -> Int32 {
        let fd = sd_bus_get_fd(pointer)
        guard fd >= 0 else { throw SDBusError("sd_bus_get_fd", fd) }
        return fd
    }

    /// The poll events sd-bus waits for (`POLLIN`, `POLLOUT`), `sd_bus_get_events`.
    func events() throws(SDBusError) -> Int32 {
        let events = sd_bus_get_events(pointer)
        guard events >= 0 else { throw SDBusError("sd_bus_get_events", events) }
        return events
    }

    /// When sd-bus must be processed even without I/O (a method call timing out), as an absolute
    /// CLOCK_MONOTONIC time in µs; nil for never. `sd_bus_get_timeout`.
    func timeout() throws(SDBusError) -> UInt64? {
        var usec: UInt64 = 0
        let result = sd_bus_get_timeout(pointer, &usec)
        guard result >= 0 else { throw SDBusError("sd_bus_get_timeout", result) }
        return usec == UInt64.max ? nil : usec
    }

    /// Runs one step (reads, writes, dispatches one message to its callback), `sd_bus_process`.
    /// Returns false when there was nothing to do; callers loop until then.
    func process() throws(SDBusError) -> Bool {
        let result = sd_bus_process(pointer, nil)
        guard result >= 0 else { throw SDBusError("sd_bus_process", result) }
        return result > 0
    }

    /// A method call message, `sd_bus_message_new_method_call`.
    func methodCall(destination: String, path: String, interface: String, member: String) throws(SDBusError) -> SDBusMessage {
        var message: OpaquePointer?
        let result = sd_bus_message_new_method_call(pointer, &message, destination, path, interface, member)
        guard result >= 0, let message else {
            throw SDBusError(function: "sd_bus_message_new_method_call(\(path) \(interface).\(member))", errno: -result)
        }
        return SDBusMessage(adopting: message)
    }

    /// Sends `message` and calls `callback` with the reply (or error reply) later, from
    /// `process()`. `sd_bus_call_async`; the call is cancelled when the slot is released.
    /// `timeoutMicroseconds` 0 is sd-bus's default (25 s).
    func callAsync(_ message: SDBusMessage, callback: SDBusHandler, userdata: UnsafeMutableRawPointer?,
                   timeoutMicroseconds: UInt64 = 0) throws(SDBusError) -> SDBusSlot {
        var slot: OpaquePointer?
        let result = sd_bus_call_async(pointer, &slot, message.pointer, callback, userdata, timeoutMicroseconds)
        guard result >= 0, let slot else { throw SDBusError("sd_bus_call_async", result) }
        return SDBusSlot(adopting: slot)
    }

    /// Installs a match rule without waiting for the bus's answer, `sd_bus_add_match_async`;
    /// `installed` gets the `AddMatch` reply. Removed when the slot is released.
    func addMatchAsync(_ rule: String, callback: SDBusHandler, installed: SDBusHandler,
                       userdata: UnsafeMutableRawPointer?) throws(SDBusError) -> SDBusSlot {
        var slot: OpaquePointer?
        let result = sd_bus_add_match_async(pointer, &slot, rule, callback, installed, userdata)
        guard result >= 0, let slot else { throw SDBusError(function: "sd_bus_add_match_async(\(rule))", errno: -result) }
        return SDBusSlot(adopting: slot)
    }

    /// Writes out what is queued, waiting for the socket (`sd_bus_flush`): before letting a
    /// connection go with calls that must still reach their service.
    func flush() {
        _ = sd_bus_flush(pointer)
    }

    /// Serves the object at `path`: every method call to it goes to `callback`, which returns
    /// a positive number when it handled the call (`sd_bus_add_object`). Removed when the slot
    /// is released.
    func addObject(_ path: String, callback: SDBusHandler, userdata: UnsafeMutableRawPointer?) throws(SDBusError) -> SDBusSlot {
        var slot: OpaquePointer?
        let result = sd_bus_add_object(pointer, &slot, path, callback, userdata)
        guard result >= 0, let slot else { throw SDBusError(function: "sd_bus_add_object(\(path))", errno: -result) }
        return SDBusSlot(adopting: slot)
    }
}

/// A slot (`sd_bus_slot *`): a pending call or an installed match, cancelled by `sd_bus_slot_unref`
/// on deinit.
final class SDBusSlot {
    let pointer: OpaquePointer
    init(adopting pointer: OpaquePointer) { self.pointer = pointer }
    deinit { sd_bus_slot_unref(pointer) }
}

/// A message (`sd_bus_message *`), referenced while this object lives (`sd_bus_message_ref`/`unref`).
final class SDBusMessage {
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns (from `sd_bus_message_new_*`).
    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    /// Takes a new reference on a message sd-bus lends to a callback.
    init(borrowing pointer: OpaquePointer) {
        self.pointer = pointer
        sd_bus_message_ref(pointer)
    }

    deinit { sd_bus_message_unref(pointer) }

    /// Appends a `s` argument, `sd_bus_message_append_basic`.
    func append(_ string: String) throws(SDBusError) {
        let result = string.withCString { sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "s")), $0) }
        guard result >= 0 else { throw SDBusError("sd_bus_message_append_basic", result) }
    }

    /// Whether the bus may start the destination service for this call (D-Bus activation),
    /// `sd_bus_message_set_auto_start`.
    func setAutoStart(_ autoStart: Bool) {
        _ = sd_bus_message_set_auto_start(pointer, autoStart ? 1 : 0)
    }

    /// `sd_bus_message_get_sender` (the unique name of a message from a peer).
    var sender: String? { sd_bus_message_get_sender(pointer).map { String(cString: $0) } }
    /// `sd_bus_message_get_path`.
    var path: String? { sd_bus_message_get_path(pointer).map { String(cString: $0) } }
    /// `sd_bus_message_get_interface`.
    var interface: String? { sd_bus_message_get_interface(pointer).map { String(cString: $0) } }
    /// `sd_bus_message_get_member`.
    var member: String? { sd_bus_message_get_member(pointer).map { String(cString: $0) } }

    /// The error of an error reply (`sd_bus_message_get_error`, `sd_bus_message_get_errno`), nil
    /// for any other message.
    var error: SDBusError? {
        guard sd_bus_message_is_method_error(pointer, nil) > 0 else { return nil }
        let error = sd_bus_message_get_error(pointer)
        return SDBusError(function: "reply", errno: sd_bus_message_get_errno(pointer),
                          name: error?.pointee.name.map { String(cString: $0) },
                          message: error?.pointee.message.map { String(cString: $0) })
    }

    /// Reads every argument from the current position, whatever its signature
    /// (`sd_bus_message_peek_type`, `sd_bus_message_read_basic`, `sd_bus_message_enter_container`,
    /// `sd_bus_message_exit_container`). Rewinds first, so it may be called again.
    func readAll() throws(SDBusError) -> [DBusValue] {
        let result = sd_bus_message_rewind(pointer, 1)
        guard result >= 0 else { throw SDBusError("sd_bus_message_rewind", result) }
        return try readSequence()
    }

    /// Reads values until the end of the current container (or of the message).
    private func readSequence() throws(SDBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let result = sd_bus_message_peek_type(pointer, &type, &contents)
            guard result >= 0 else { throw SDBusError("sd_bus_message_peek_type", result) }
            if result == 0 { return values }
            values.append(try readValue(type: UInt8(bitPattern: type), contents: contents))
        }
    }

    private func readValue(type: UInt8, contents: UnsafePointer<CChar>?) throws(SDBusError) -> DBusValue {
        switch type {
        case UInt8(ascii: "a"), UInt8(ascii: "v"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            var result = sd_bus_message_enter_container(pointer, CChar(bitPattern: type), contents)
            guard result >= 0 else { throw SDBusError("sd_bus_message_enter_container", result) }
            let inner = try readSequence()
            result = sd_bus_message_exit_container(pointer)
            guard result >= 0 else { throw SDBusError("sd_bus_message_exit_container", result) }
            switch type {
            case UInt8(ascii: "a"): return .array(inner)
            case UInt8(ascii: "v"):
                guard inner.count == 1 else { throw SDBusError(function: "sd_bus_message_enter_container(v)", errno: EBADMSG) }
                return .variant(inner[0])
            case UInt8(ascii: "e"):
                guard inner.count == 2 else { throw SDBusError(function: "sd_bus_message_enter_container(e)", errno: EBADMSG) }
                return .dictEntry(inner[0], inner[1])
            default: return .structure(inner)
            }
        case UInt8(ascii: "y"): return .byte(try readBasic(type, UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try readBasic(type, Int32(0)) != 0)   // sd-bus reads `b` as int
        case UInt8(ascii: "n"): return .int16(try readBasic(type, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try readBasic(type, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try readBasic(type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try readBasic(type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try readBasic(type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try readBasic(type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try readBasic(type, Double(0)))
        case UInt8(ascii: "h"): return .unixFD(try readBasic(type, Int32(0)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let text = try readBasic(type, UnsafePointer<CChar>?.none).map { String(cString: $0) } ?? ""
            switch type {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        default:
            throw SDBusError(function: "sd_bus_message_peek_type(\(Character(Unicode.Scalar(type))))", errno: EBADMSG)
        }
    }

    /// `sd_bus_message_read_basic` into a value of the C type that `type` maps to.
    private func readBasic<T>(_ type: UInt8, _ initial: T) throws(SDBusError) -> T {
        var value = initial
        let result = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(pointer, CChar(bitPattern: type), $0) }
        guard result >= 0 else { throw SDBusError("sd_bus_message_read_basic", result) }
        return value
    }
}
