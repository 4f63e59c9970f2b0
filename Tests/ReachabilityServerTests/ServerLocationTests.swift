import Foundation
import ReachabilityClient
import ReachabilityCore
import ReachabilityServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An access point's address (`WiFi.bssid`) locates the machine: root's connections are sent it,
/// every other caller gets it null, in `GetStatus`, a subscription's first reply, a replay and
/// the live fan-out alike; the network's name and the rest are sent to everyone.
@Suite(.serialized) struct ServerLocationTests {
    static let bssid = "02:11:22:33:44:55", roamed = "02:11:22:33:44:66"

    /// The value at `keys` below `parameters`.
    static func field(_ parameters: [String: JSONValue], _ keys: String...) -> JSONValue? {
        var value: JSONValue? = parameters[keys[0]]
        for key in keys.dropFirst() { value = value?.objectValue?[key] }
        return value
    }

    static func wifiStatus(bssid: String) -> Status {
        var status = Fixture.status(reachable: true)
        let wifi = WiFi(ssid: "cafe", bssid: bssid, frequencyMHz: 5180, band: .band5GHz, signalDbm: -61, strengthPercent: 59,
                        bars: 3, owner: .iwd)
        status.status = .wifi
        status.primary?.kind = .wifi
        status.primary?.wifi = wifi
        status.interfaces[0] = status.primary ?? status.interfaces[0]
        return status
    }

    /// A client as `nobody`: GetStatus, then a subscription resumed after `after` that prints
    /// `messages` replies, one a line.
    static func nobodyReads(_ path: String, after: Int, messages: Int) throws -> [String] {
        let output = try runAsNobody(["python3", "-c", """
            import socket, json, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
            buffer = b""
            def read():
                global buffer
                while b"\\0" not in buffer:
                    chunk = s.recv(65536)
                    if not chunk: sys.exit("closed")
                    buffer += chunk
                message, _, buffer = buffer.partition(b"\\0")
                print(message.decode(), flush=True)
            s.sendall(json.dumps({"method": "io.reachd.Reachability.GetStatus"}).encode() + b"\\0")
            read()
            s.sendall(json.dumps({"method": "io.reachd.Reachability.Subscribe", "parameters": {"after": int(sys.argv[2])},
                                  "more": True}).encode() + b"\\0")
            for _ in range(int(sys.argv[3])): read()
            """, path, String(after), String(messages)])
        return output.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: getuid() == 0, "needs root: a second uid (setpriv)"))
    func onlyRootIsSentTheAccessPoint() throws {
        let h = try ServerHarness()
        chmod(h.directory, 0o755)
        let first = Self.wifiStatus(bssid: Self.bssid)
        h.server.publish(Fixture.change(sequence: 1001, from: h.status, to: first))

        // Root: the address, everywhere.
        let root = try h.connect()
        let rootStatus = try root.call(VarlinkCall(method: "io.reachd.Reachability.GetStatus"))
        #expect(Self.field(rootStatus.parameters, "status", "primary", "wifi", "bssid") == .string(Self.bssid))

        // Someone else: the network, band and bars, no address (GetStatus, then the replay of 1001).
        var lines = try Self.nobodyReads(h.path, after: 1000, messages: 1)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { !$0.contains(Self.bssid) && $0.contains(#""bssid":null"#) && $0.contains(#""ssid":"cafe""#) }, "\(lines)")

        // The live fan-out, after a roam: root's subscriber gets the new address, the other not.
        let subscriber = try h.connect()
        try subscriber.subscribe()
        _ = try subscriber.receive()
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) {
            h.server.publish(Fixture.change(sequence: 1002, from: first, to: Self.wifiStatus(bssid: Self.roamed), reason: .roamed))
        }
        // Nothing to replay after 1001: its one message is the roam, live (or replayed, if it
        // came before the subscription).
        lines = try Self.nobodyReads(h.path, after: 1001, messages: 1)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.last?.contains(#""code":"roamed""#) == true, "\(lines)")
        #expect(lines.allSatisfy { !$0.contains(Self.bssid) && !$0.contains(Self.roamed) }, "\(lines)")
        let event = try subscriber.receive()
        #expect(Self.field(event.parameters, "event", "current", "primary", "wifi", "bssid") == .string(Self.roamed))
        #expect(Self.field(event.parameters, "event", "previous", "primary", "wifi", "bssid") == .string(Self.bssid))
    }

    @Test func aStatusWithoutLocationIsItselfAndOneWithIsStripped() {
        let plain = Fixture.status(reachable: true)
        #expect(plain.withoutLocation == nil && !plain.showsLocation)
        let located = Self.wifiStatus(bssid: Self.bssid)
        let stripped = located.withoutLocation
        #expect(stripped?.primary?.wifi?.bssid == nil && stripped?.interfaces.allSatisfy { $0.wifi?.bssid == nil } == true)
        #expect(stripped?.primary?.wifi?.ssid == "cafe" && stripped?.primary?.wifi?.bars == 3)
    }
}
