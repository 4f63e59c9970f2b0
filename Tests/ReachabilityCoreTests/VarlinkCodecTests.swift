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
        let value = try WireJSON.decoder().decode(JSONValue.self, from: Data(#"[1, 1.5, true, null, "s", {"k": false}]"#.utf8))
        #expect(value == .array([.int(1), .double(1.5), .bool(true), .null, .string("s"), .object(["k": .bool(false)])]))
        #expect(JSONValue.double(5).intValue == 5)
        #expect(JSONValue.double(5.5).intValue == nil)
        #expect(JSONValue.bool(true).intValue == nil)
    }
}

@Suite struct InterfaceDescriptionTests {
    @Test func shippedFileMatchesTheConstant() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ReachabilityCore/io.reachd.Reachability.varlink")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == InterfaceDescription.reachability + "\n")
    }

    @Test func matchesTheDesignContract() throws {
        let design = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DESIGN.md")
        // The repository may not carry DESIGN.md; the shared copy is the contract.
        let candidates = [design.path, "/work/shared/DESIGN.md"]
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else { return }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // §3 holds the original description; the additive declarations of §9 are listed there
        // apart. The description is §3's with those lines added.
        let additions = Self.additions(in: text)
        let original = InterfaceDescription.reachability.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !additions.contains($0.trimmingCharacters(in: .whitespaces)) }.joined(separator: "\n")
        #expect(text.contains(original))
        for line in InterfaceDescription.reachability.split(separator: "\n") where line.hasPrefix("error ") || line.hasPrefix("method ") {
            #expect(text.contains(line), "\(line) is not in the contract")
        }
    }

    /// The `error …` lines of the contract's "Protocol additions" section (its trailing comments cut).
    static func additions(in design: String) -> Set<String> {
        guard let start = design.range(of: "## 9. Protocol additions") else { return [] }
        let section = design[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        return Set(section[..<end].split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("error ") else { return nil }
            let declaration = line.split(separator: "#", maxSplits: 1).first ?? line
            return declaration.trimmingCharacters(in: .whitespaces)
        })
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
