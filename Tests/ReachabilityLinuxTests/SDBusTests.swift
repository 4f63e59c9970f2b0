import Foundation
import ReachabilityCore
@testable import ReachabilityLinux
import TestSupport
import Testing

/// Holds the reply a C callback received.
private final class ReplyBox {
    var reply: SDBusMessage?
}

/// Calls `member` of the mock's control interface and runs the bus until the reply is in.
private func call(_ member: String, on bus: SDBus) throws -> SDBusMessage? {
    let message = try bus.methodCall(destination: ModemManagerMock.name, path: ModemManagerDBus.path,
                                     interface: "org.freedesktop.DBus.Mock", member: member)
    let box = ReplyBox()
    let slot = try bus.callAsync(message, callback: { reply, userdata, _ in
        guard let reply, let userdata else { return 0 }
        Unmanaged<ReplyBox>.fromOpaque(userdata).takeUnretainedValue().reply = SDBusMessage(borrowing: reply)
        return 0
    }, userdata: Unmanaged.passUnretained(box).toOpaque())
    _ = waitUntil(timeout: 10) {
        while (try? bus.process()) == true {}
        return box.reply != nil
    }
    withExtendedLifetime(slot) {}
    return box.reply
}

extension SystemTests {
@Suite(.serialized) struct SDBusTests {
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func decodesEveryType() throws {
        let privateBus = try PrivateBus()
        let mm = try ModemManagerMock(bus: privateBus)
        let bus = try SDBus.connect(address: privateBus.address)
        let reply = try #require(try call("AllTypes", on: bus))
        #expect(reply.error == nil)
        #expect(reply.sender?.hasPrefix(":") == true)
        let values = try reply.readAll()
        #expect(values == [
            .byte(7), .bool(true), .int16(-3), .uint16(65535), .int32(-70000), .uint32(4_000_000_000),
            .int64(-5_000_000_000), .uint64(18_000_000_000_000_000_000), .double(2.5), .string("h\u{e9}llo"),
            .objectPath("/a/b"), .signature("a{sv}"), .variant(.uint32(9)),
            .array([.structure([.string("wwan0"), .uint32(2)])]),
            .array([.dictEntry(.string("k"), .variant(.bool(false)))]),
        ])
        // Reading twice gives the same (readAll rewinds).
        #expect(try reply.readAll() == values)
        #expect(values[14].dictionary == ["k": .variant(.bool(false))])
        mm.kill()
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func errorRepliesCarryTheirName() throws {
        let privateBus = try PrivateBus()
        let mm = try ModemManagerMock(bus: privateBus)
        let bus = try SDBus.connect(address: privateBus.address)
        let reply = try #require(try call("NoSuchMethod", on: bus))
        let error = try #require(reply.error)
        #expect(error.name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(error.description.hasPrefix("reply: org.freedesktop.DBus.Error.UnknownMethod"))
        mm.kill()
    }

    /// The signature an appended value goes out with: told from the value, nil (refused) where
    /// the value cannot tell (an empty or mixed array).
    @Test func signaturesOfAppendedValues() {
        let settings: DBusValue = .array([.dictEntry(.string("rssi-threshold"), .variant(.uint32(5)))])
        #expect(settings.signature == "a{sv}")
        #expect(DBusValue.uint32(30).signature == "u")
        #expect(DBusValue.structure([.string("wwan0"), .uint32(2), .array([.double(1)])]).signature == "(suad)")
        #expect(DBusValue.array([.int32(1), .string("x")]).signature == nil)
        #expect(DBusValue.array([]).signature == nil)
        #expect(DBusValue.structure([]).signature == nil)
    }

    @Test func connectFailureNamesTheFunctionAndErrno() {
        #expect(throws: SDBusError(function: "sd_bus_start(unix:path=/nonexistent/bus)", errno: ENOENT)) {
            _ = try SDBus.connect(address: "unix:path=/nonexistent/bus")
        }
        #expect(SDBusError(function: "sd_bus_open_system", errno: ENOENT).description
                == "sd_bus_open_system: No such file or directory")
    }
}
}
