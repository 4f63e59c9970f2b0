import Foundation
import Testing
@testable import ReachabilityCore

@Suite struct VarlinkFramerTests {
    @Test func messageSplitAcrossReads() throws {
        var framer = VarlinkFramer()
        let bytes = Array(#"{"method":"a.b.C"}"#.utf8) + [0]
        for (i, byte) in bytes.enumerated() {
            let messages = try framer.messages(after: [byte])
            if i < bytes.count - 1 { #expect(messages.isEmpty) } else { #expect(messages == [Array(bytes.dropLast())]) }
        }
        #expect(framer.pendingByteCount == 0)
    }

    @Test func severalMessagesInOneRead() throws {
        var framer = VarlinkFramer()
        let input = Array("{\"a\":1}\0{\"b\":2}\0{\"c\"".utf8)
        let messages = try framer.messages(after: input)
        #expect(messages.map { String(decoding: $0, as: UTF8.self) } == [#"{"a":1}"#, #"{"b":2}"#])
        #expect(framer.pendingByteCount == 4)
        let rest = try framer.messages(after: Array(":3}\0".utf8))
        #expect(rest.map { String(decoding: $0, as: UTF8.self) } == [#"{"c":3}"#])
    }

    @Test(arguments: [
        (limit: 16, message: 16, fits: true),
        (limit: 16, message: 17, fits: false),
        (limit: 64 * 1024, message: 64 * 1024, fits: true),
        (limit: 64 * 1024, message: 64 * 1024 + 1, fits: false),
    ])
    func sizeLimit(limit: Int, message: Int, fits: Bool) throws {
        var framer = VarlinkFramer(limit: limit)
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: message) + [0]
        if fits {
            #expect(try framer.messages(after: bytes).first?.count == message)
        } else {
            #expect(throws: VarlinkProtocolError.messageTooLarge(limit: limit)) { try framer.messages(after: bytes) }
        }
    }

    @Test func oversizedWithoutNULFailsBeforeTheNULArrives() throws {
        var framer = VarlinkFramer(limit: 1024)
        #expect(try framer.messages(after: [UInt8](repeating: 0x41, count: 1024)).isEmpty)
        #expect(throws: VarlinkProtocolError.messageTooLarge(limit: 1024)) { try framer.messages(after: [0x41]) }
    }

    @Test func manyMessagesCompactTheBuffer() throws {
        var framer = VarlinkFramer(limit: 100)
        var count = 0
        for i in 0..<10_000 {
            count += try framer.messages(after: Array("{\"i\":\(i)}\0".utf8)).count
        }
        #expect(count == 10_000)
        #expect(framer.pendingByteCount == 0)
    }
}

@Suite struct VarlinkCodecTests {
    @Test func decodesACall() throws {
        let call = try VarlinkCodec.decodeCall(Array(#"{"method":"io.reachd.Reachability.Subscribe","parameters":{"after":42,"statusOnly":true},"more":true}"#.utf8))
        #expect(call.method == "io.reachd.Reachability.Subscribe")
        #expect(call.interface == "io.reachd.Reachability")
        #expect(call.member == "Subscribe")
        #expect(call.parameters == ["after": .int(42), "statusOnly": .bool(true)])
        #expect(call.more && !call.oneway)
    }

    @Test func missingParametersIsEmpty() throws {
        let call = try VarlinkCodec.decodeCall(Array(#"{"method":"org.varlink.service.GetInfo"}"#.utf8))
        #expect(call.parameters.isEmpty && !call.more)
    }

    @Test(arguments: [
        (#"{"method":"a.b","#, "malformed"),
        ("[1,2]", "notAnObject"),
        (#"{"parameters":{}}"#, "missing"),
        (#"{"method":5}"#, "wrongType"),
        (#"{"method":"a.b","more":"yes"}"#, "wrongType"),
        (#"{"method":"a.b","parameters":[]}"#, "wrongType"),
        ("", "malformed"),
    ])
    func rejectsBadCalls(text: String, kind: String) {
        do {
            _ = try VarlinkCodec.decodeCall(Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch let error as VarlinkProtocolError {
            switch error {
            case .malformedJSON: #expect(kind == "malformed")
            case .notAnObject: #expect(kind == "notAnObject")
            case .missingField: #expect(kind == "missing")
            case .wrongType: #expect(kind == "wrongType")
            case .invalidUTF8, .messageTooLarge: Issue.record("unexpected \(error)")
            }
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"method":""#.utf8) + [0xff, 0xfe] + Array(#""}"#.utf8)
        #expect(throws: VarlinkProtocolError.invalidUTF8) { try VarlinkCodec.decodeCall(bytes) }
    }

    @Test func encodesCallsAndRepliesThatDecodeBack() throws {
        let call = VarlinkCall(method: "io.reachd.Reachability.Check", parameters: ["host": .string("example.com"), "port": .int(443)], more: false, oneway: true)
        #expect(try VarlinkCodec.decodeCall(VarlinkCodec.encode(call)) == call)

        let reply = VarlinkReply(parameters: ["x": .array([.null, .double(1.5), .string("é")])], continues: true)
        #expect(try VarlinkCodec.decodeReply(VarlinkCodec.encodeReply(reply)) == reply)

        let error = VarlinkError.subscriberTooSlow(dropped: 7)
        let decoded = try VarlinkCodec.decodeReply(VarlinkCodec.encode(error))
        #expect(decoded.error == "io.reachd.Reachability.SubscriberTooSlow")
        #expect(decoded.parameters == ["dropped": .int(7)])
    }

    @Test func splicedEventReplyDecodesToTheEvent() throws {
        let event = ReachabilityEvent(sequence: 9, timestamp: Date(timeIntervalSince1970: 1_800_000_000.25), event: .initial,
                                      reason: Reason(code: .initial), previous: nil, current: Status.initial(since: Date(timeIntervalSince1970: 1_800_000_000)))
        let bytes = VarlinkCodec.encodeReply(parametersJSON: try VarlinkCodec.encodeParameters(key: "event", value: event), continues: true)
        let reply = try VarlinkCodec.decodeReply(bytes)
        #expect(reply.continues)
        #expect(try reply.decode(ReachabilityEvent.self, key: "event") == event)
        // Every optional is present as null (strict clients validate the object).
        let current = try #require(reply.parameters["event"]?.objectValue?["current"]?.objectValue)
        #expect(current["primary"] == .null && current["probe"] == .null && current["vpn"] == .null)
        #expect(reply.parameters["event"]?.objectValue?["previous"] == .null)
    }

    @Test func jsonValueKeepsNumberKinds() throws {
        let value = try JSONValue(parsing: Data(#"[1, 1.5, true, null, "s", {"k": false}]"#.utf8))
        #expect(value == .array([.int(1), .double(1.5), .bool(true), .null, .string("s"), .object(["k": .bool(false)])]))
        #expect(JSONValue.double(5).intValue == 5)
        #expect(JSONValue.double(5.5).intValue == nil)
        #expect(JSONValue.bool(true).intValue == nil)
    }
}

@Suite struct InterfaceDescriptionTests {
    @Test func shippedFileMatchesTheConstant() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ReachabilityCore/Varlink/io.reachd.Reachability.varlink")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == InterfaceDescription.reachability + "\n")
    }

    // That the running daemon serves exactly this text, and every reply matches it, is checked
    // by an independent client: IntegrationTests' InterfaceConformanceTests.

    /// The description carries the `changes` list of Event and the Subscribe filters.
    @Test func carriesTheChangesAdditions() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains { $0.hasPrefix("type Event (") && $0.contains("current: Status, changes: []string") })
        #expect(ours.contains { $0.hasPrefix("method Subscribe(after: ?int, statusOnly: ?bool, changes: ?[]string)") })
    }

    /// The simulation's additions: the method, the flag in Status, the reason, the error.
    @Test func carriesTheSimulationAdditions() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains("method Simulate(status: ?string, connectivity: ?string, expensive: ?bool, accessTechnology: ?string, seconds: ?int, whileConnected: ?bool, reset: ?bool) -> (status: Status)"))
        #expect(ours.contains { $0.hasPrefix("type Status (") && $0.contains("since: string, simulated: bool") })
        #expect(ours.contains { $0.hasPrefix("type Reason (code: (") && $0.contains("configReloaded, simulation") })
        #expect(ours.contains { $0.contains("error PermissionDenied ()") })
        #expect(Reason.Code.allCases.map(\.rawValue).contains("simulation"))
    }

    /// The policy routing additions: the path per family in Status, the rule and kill switch reasons.
    @Test func carriesThePolicyRoutingAdditions() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains { $0.hasPrefix("type Status (") && $0.contains("simulated: bool, routing: []RoutePath,") })
        #expect(ours.contains("type RoutePath (family: (ipv4, ipv6), destination: string, result: (route, unreachable, blackhole, prohibit, none), rule: ?int, table: ?int, interface: ?string, gateway: ?string)"))
        #expect(ours.contains { $0.hasPrefix("type Reason (code: (") && $0.contains("simulation, ruleAdded, ruleRemoved, killSwitch, routerAdvertisement, sleeping, resumed") })
        #expect(RoutePath.Result.allCases.map(\.rawValue) == ["route", "unreachable", "blackhole", "prohibit", "none"])
    }

    /// Whether the connectivity check is on: optional, so a strict client of an older
    /// description, and one of this, both validate either daemon's status.
    @Test func carriesTheCheckSwitch() {
        #expect(Self.declarations(InterfaceDescription.reachability).contains {
            $0.hasPrefix("type Status (") && $0.contains("routing: []RoutePath, connectivityCheck: ?bool")
        })
    }

    /// The link quality's addition: optional in Status and Interface (an older daemon sends
    /// none), its types, and its reason.
    @Test func carriesTheLinkQuality() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains { $0.hasPrefix("type Status (") && $0.contains(", linkQuality: ?LinkQuality") })
        #expect(ours.contains { $0.hasPrefix("type Interface (") && $0.contains(", linkQuality: ?LinkQuality") })
        #expect(ours.contains("type LinkQuality (level: (unknown, minimal, moderate, good), effectiveType: ?string, rttMs: ?float, minRttMs: ?float, downlinkKbps: ?float, lossPercent: ?float, samples: int, source: (passive, probe, radio, default), measuredAt: string, stale: bool, signal: ?RadioSignal)"))
        #expect(ours.contains("type RadioSignal (technology: string, rssi: ?float, rsrp: ?float, rsrq: ?float, snr: ?float, level: int)"))
        #expect(ours.contains { $0.hasPrefix("type Reason (code: (") && $0.contains("resumed, qualityChanged, costChanged,") })
        // The enums in the description are the Swift ones.
        #expect(LinkQuality.Level.allCases.map(\.rawValue) == ["unknown", "minimal", "moderate", "good"])
        #expect(LinkQuality.Source.allCases.map(\.rawValue) == ["passive", "probe", "radio", "default"])
        #expect(Reason.Code.allCases.dropLast(4).suffix(2) == [.qualityChanged, .costChanged])
    }

    /// The data stall's addition: optional in Interface, its type, its reason (above).
    @Test func carriesTheDataStall() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains { $0.hasPrefix("type Interface (") && $0.hasSuffix(", linkQuality: ?LinkQuality, stall: ?DataStall, wifi: ?WiFi)") })
        #expect(ours.contains("type DataStall (since: string, method: string, failRate: float, sentSinceReceive: int, periodMs: int, recent: []DataStallDump)"))
        #expect(ours.contains("type DataStallDump (at: string, periodMs: int, sent: int, received: int, retransmitted: int)"))
        #expect(DataStall.Method.allCases.map(\.rawValue) == ["tcp"])
        #expect(ours.contains { $0.hasPrefix("type Reason (code: (") && $0.contains("costChanged, dataStall, roamed,") })
        #expect(Reason.Code.allCases.dropLast(3).last == .dataStall)
    }

    /// The Wi-Fi addition: optional in Interface (an older daemon sends none), its type, and
    /// its reasons, appended.
    @Test func carriesTheWiFi() {
        let ours = Self.declarations(InterfaceDescription.reachability)
        #expect(ours.contains { $0.hasPrefix("type Interface (") && $0.hasSuffix(", stall: ?DataStall, wifi: ?WiFi)") })
        #expect(ours.contains("type WiFi (ssid: ?string, bssid: ?string, frequencyMHz: ?int, band: ?string, signalDbm: ?int, strengthPercent: ?int, bars: ?int, txBitrateKbps: ?int, owner: string)"))
        #expect(ours.contains { $0.hasPrefix("type Reason (code: (") && $0.contains("dataStall, roamed, wifiSignalChanged, wifiChanged)") })
        #expect(Reason.Code.allCases.suffix(3) == [.roamed, .wifiSignalChanged, .wifiChanged])
        #expect(WiFiBand.allCases.map(\.rawValue) == ["2.4GHz", "5GHz", "6GHz"])
        #expect(WiFiOwner.allCases.map(\.rawValue) == ["iwd", "networkManager", "wpaSupplicant", "nl80211"])
    }

    /// The limits' addition: the error a caller gets over a limit.
    @Test func carriesTheBusyError() {
        #expect(Self.declarations(InterfaceDescription.reachability).contains { $0.contains("error Busy (retryAfterMs: int)") })
    }

    /// No two members share a name, and in particular no type is named like a method: python's
    /// reference `varlink` package keeps one member per name, so a `type Probe` beside `method
    /// Probe` left it unable to validate a `GetStatus` reply that carries a probe.
    @Test func noTwoMembersShareAName() {
        for description in [InterfaceDescription.reachability, InterfaceDescription.service] {
            let members = Self.memberNames(description)
            #expect(members.count > 5)
            #expect(Self.sharedNames(members).isEmpty, "\(Self.sharedNames(members))")
            let types = Set(members.filter { $0.kind == "type" }.map(\.name))
            let methods = Set(members.filter { $0.kind == "method" }.map(\.name))
            #expect(types.isDisjoint(with: methods), "\(types.intersection(methods))")
        }
        #expect(Self.memberNames(InterfaceDescription.reachability).contains { $0 == (kind: "type", name: "ConnectivityProbe") })
        // The check finds the clash this interface once had.
        let clash = "interface a.b\n\ntype Probe (url: string)\n\nmethod Probe() -> (probe: Probe)\n"
        #expect(Self.sharedNames(Self.memberNames(clash)) == ["Probe"])
    }

    /// Each `type`, `method` and `error` of a description: its keyword and name.
    static func memberNames(_ text: String) -> [(kind: String, name: String)] {
        declarations(text).compactMap { declaration in
            let words = declaration.split(separator: " ", maxSplits: 1)
            guard words.count == 2, ["type", "method", "error"].contains(String(words[0])) else { return nil }
            let name = words[1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return (String(words[0]), String(name))
        }
    }

    /// The names declared more than once, sorted.
    static func sharedNames(_ members: [(kind: String, name: String)]) -> [String] {
        Dictionary(grouping: members, by: \.name).filter { $0.value.count > 1 }.keys.sorted()
    }

    /// The declarations of a varlink description, comments dropped, white space collapsed.
    static func declarations(_ text: String) -> [String] {
        var result: [String] = [], current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") { continue }
            if trimmed.isEmpty {
                if !current.isEmpty { result.append(current) }
                current = ""
                continue
            }
            current += current.isEmpty || current.hasSuffix("(") || trimmed.hasPrefix(")") ? trimmed : " " + trimmed
        }
        if !current.isEmpty { result.append(current) }
        return result.map { $0.replacingOccurrences(of: "( ", with: "(").replacingOccurrences(of: " )", with: ")") }
    }

    @Test func namesEveryWireEnumValue() {
        let text = InterfaceDescription.reachability
        for status in NetworkStatus.allCases { #expect(text.contains(status.rawValue)) }
        for code in Reason.Code.allCases { #expect(text.contains(code.rawValue)) }
        for kind in InterfaceKind.allCases { #expect(text.contains(kind.rawValue)) }
        #expect(InterfaceDescription.description(of: "io.reachd.Reachability") != nil)
        #expect(InterfaceDescription.description(of: "org.varlink.service")?.contains("interface org.varlink.service") == true)
        #expect(InterfaceDescription.description(of: "org.example.Nope") == nil)
    }

    /// The enum types of the description list exactly the Swift enums' raw values, in order
    /// (a `contains` check alone would let `wwan` pass for `wwan2G`).
    @Test func enumTypesEqualTheSwiftEnums() {
        func values(of field: String) -> [String] {
            let text = InterfaceDescription.reachability
            guard let start = text.range(of: "\n  \(field): (") else { return [] }
            guard let end = text[start.upperBound...].firstIndex(of: ")") else { return [] }
            return text[start.upperBound..<end].split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        #expect(values(of: "status") == NetworkStatus.allCases.map(\.rawValue))
        #expect(values(of: "kind") == InterfaceKind.allCases.map(\.rawValue))
        #expect(values(of: "connectivity") == Connectivity.allCases.map(\.rawValue))
        #expect(values(of: "result") == Connectivity.allCases.map(\.rawValue))
        #expect(values(of: "code") == Reason.Code.allCases.map(\.rawValue))
        #expect(values(of: "event") == ReachabilityEvent.Kind.allCases.map(\.rawValue))
    }
}
