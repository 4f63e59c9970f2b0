import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// Any varlink client reads every reply: python's reference `varlink` package (its Client, its
/// interface handler, its parser; Tests/python/varlink_conformance.py) calls every method of
/// both interfaces on a running reachd, meets every error the interface declares, and reads
/// every reply shape: Status with a probe, a modem and a primary in it, ConnectivityProbe,
/// HostCheck, Event (initial, changed, replayed after `after`, resync) and a simulated Status.
/// Each reply passes the package's own checks and, as received, a strict one against the same
/// parsed description (every field present, no other, enum values declared); error parameters
/// match their declared types. The methods and errors met are compared with the description,
/// so a new one fails here until it is called.
@Suite struct ReferenceClientConformanceTests {
    static let script = Paths.file("Tests/python/varlink_conformance.py")
    static let interface = "io.reachd.Reachability"

    /// The script's JSON lines.
    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Runs the script (as `user`, with setpriv, when given) and returns its lines.
    static func runScript(_ arguments: [String], user: String? = nil) throws -> [[String: Any]] {
        let command = [Binaries.python, script] + arguments
        let result: (status: Int32, stdout: String, stderr: String)
        if let user {
            result = try run("/usr/bin/setpriv", ["--reuid=\(user)", "--regid=nogroup", "--clear-groups"] + command, timeout: 30)
        } else {
            result = try run(command[0], Array(command.dropFirst()), timeout: 30)
        }
        let lines = objects(result.stdout)
        if lines.isEmpty { Issue.record("varlink_conformance.py \(arguments): no output; \(result.stderr)") }
        return lines
    }

    /// The `reply` of a line, and that the package and the strict check both accepted it.
    static func reply(_ line: [String: Any]?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any]? {
        #expect(line?["valid"] as? Bool == true, "\(what): \(String(describing: line))", sourceLocation: sourceLocation)
        return line?["reply"] as? [String: Any]
    }

    /// The error of a line is `name` and its parameters match the error's declared type.
    static func expectError(_ line: [String: Any]?, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(line?["error"] as? String == name, "\(String(describing: line))", sourceLocation: sourceLocation)
        #expect(line?["valid"] as? Bool == true, "\(String(describing: line))", sourceLocation: sourceLocation)
    }

    @Test(.needsRoot(), .requires(.pythonVarlink, .dbusDaemon, .busctl, .dbusMock))
    func everyMethodErrorAndReplyThroughThePythonPackage() throws {
        try Requirement.pythonVarlink.check()
        let host = try TestNamespace(tag: "p"), uplink = try TestNamespace(tag: "pu")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink, inner: "mm0", subnet: 77)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        // The machine's resolver is the test's: one name it knows, NXDOMAIN for the rest.
        let dns = try DNSServer(in: uplink, address: veth.gatewayAddress, records: [("check.example", "A", veth.gatewayAddress)])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)
        let daemon = try DaemonUnderTest(namespace: host, config: ConnectivitySystemTests.ProbeIntegrationTests.config(modemManager: true),
                                         environment: [systemBusVariable: bus.address])
        // Other users reach the socket (its directory is mkdtemp's 0700).
        chmod(daemon.directory, 0o755)
        let socket = daemon.socketPath
        // The check has run against the test's server, and the link-local address has settled,
        // so that no event of the kernel's comes between the ones the test makes.
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true },
                "\(daemon.child.stderr)")
        if let linkLocal = try veth.settledLinkLocal() {
            #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status", "--json"]).stdout.contains(linkLocal)) == true })
        }
        var methods: Set<String> = [], errors: Set<String> = []
        func call(_ method: String, _ parameters: String, more: Int? = nil, user: String? = nil) throws -> [[String: Any]] {
            methods.insert(method)
            let lines = try Self.runScript(["call", socket, method, parameters] + (more.map { ["--more", String($0)] } ?? []), user: user)
            errors.formUnion(lines.compactMap { $0["error"] as? String })
            return lines
        }

        // org.varlink.service, and the description as the package's parser reads it.
        let described = try #require(try Self.runScript(["describe", socket, Paths.file("Sources/ReachabilityCore/Varlink/io.reachd.Reachability.varlink")]).first)
        #expect(described["matches"] as? Bool == true, "\(described)")
        #expect(described["interface"] as? String == Self.interface)
        let info = described["info"] as? [String: Any]
        #expect(info?["interfaces"] as? [String] == ["org.varlink.service", Self.interface] && info?["product"] as? String == "reachd")
        let types = described["types"] as? [String] ?? [], declaredMethods = described["methods"] as? [String] ?? []
        let declaredErrors = described["errors"] as? [String] ?? []
        #expect(types.contains("ConnectivityProbe") && types.contains("Status") && declaredMethods.contains("Probe"))
        #expect(Set(types).isDisjoint(with: declaredMethods), "a type named like a method: \(types) \(declaredMethods)")
        let service = described["service"] as? [String: Any]
        #expect(service?["methods"] as? [String] == ["GetInfo", "GetInterfaceDescription"])
        let unknown = described["unknownInterface"] as? [String: Any]
        Self.expectError(unknown, "org.varlink.service.InterfaceNotFound")
        #expect((unknown?["parameters"] as? [String: Any])?["interface"] as? String == "org.example.Nope")
        errors.insert("org.varlink.service.InterfaceNotFound")

        // GetStatus, with a probe (the check ran against the test's server), a modem and a primary in it.
        let status = try #require(Self.reply(try call("GetStatus", "{}").first, "GetStatus")?["status"] as? [String: Any])
        let probe = status["probe"] as? [String: Any]
        #expect(probe?["result"] as? String == "full" && probe?["httpStatus"] as? Int == 204, "\(status)")
        #expect(status["cellular"] is [String: Any] && (status["primary"] as? [String: Any])?["name"] as? String == "mm0", "\(status)")

        // Probe: a ConnectivityProbe.
        let probed = Self.reply(try call("Probe", "{}").first, "Probe")?["probe"] as? [String: Any]
        #expect(probed?["result"] as? String == "full" && probed?["url"] as? String == "http://10.77.0.1:8080/generate_204")

        // Check: an address, a name the resolver knows, and one it does not.
        let direct = Self.reply(try call("Check", #"{"host": "10.77.0.1", "port": 8080}"#).first, "Check")?["result"] as? [String: Any]
        #expect(direct?["reachable"] as? Bool == true && (direct?["routes"] as? [[String: Any]])?.first?["interface"] as? String == "mm0")
        let named = Self.reply(try call("Check", #"{"host": "check.example"}"#).first, "Check by name")?["result"] as? [String: Any]
        #expect(named?["addresses"] as? [String] == ["10.77.0.1"] && named?["reachable"] as? Bool == true, "\(String(describing: named))")
        let missing = try call("Check", #"{"host": "nowhere.example"}"#).first
        Self.expectError(missing, "io.reachd.Reachability.HostNotFound")
        #expect((missing?["parameters"] as? [String: Any])?["host"] as? String == "nowhere.example")

        // Subscribe: the initial event, then the two a simulation makes (started, reset).
        methods.insert("Subscribe")
        let subscriber = try Child(Binaries.python, [Self.script, "call", socket, "Subscribe", "{}", "--more", "3"])
        #expect(waitUntil(timeout: 15) { Self.objects(subscriber.lines.joined(separator: "\n")).count == 1 }, "\(subscriber.stderr)")
        let simulated = Self.reply(try call("Simulate", #"{"status": "wwan4G", "seconds": 60}"#).first, "Simulate")?["status"] as? [String: Any]
        #expect(simulated?["simulated"] as? Bool == true && simulated?["status"] as? String == "wwan4G", "\(String(describing: simulated))")
        _ = Self.reply(try call("Simulate", #"{"reset": true}"#).first, "Simulate reset")
        #expect(subscriber.wait(timeout: 15) == 0, "\(subscriber.lines) \(subscriber.stderr)")
        let live = Self.objects(subscriber.lines.joined(separator: "\n")).map { Self.reply($0, "Subscribe")?["event"] as? [String: Any] ?? [:] }
        #expect(live.compactMap { $0["event"] as? String } == ["initial", "reachabilityChanged", "reachabilityChanged"])
        #expect(live.dropFirst().allSatisfy { $0["previous"] is [String: Any] } && live.first.map { $0["previous"] == nil } == true)
        #expect((live.dropFirst().first?["reason"] as? [String: Any])?["code"] as? String == "simulation")

        // Resumed after the initial event: the same two, replayed.
        let first = try #require(live.first?["sequence"] as? Int)
        let replayed = try call("Subscribe", #"{"after": \#(first)}"#, more: 2).map { Self.reply($0, "Subscribe after")?["event"] as? [String: Any] ?? [:] }
        #expect(replayed.compactMap { $0["sequence"] as? Int } == [first + 1, first + 2], "\(replayed)")
        #expect(replayed.compactMap { $0["sequence"] as? Int } == live.dropFirst().compactMap { $0["sequence"] as? Int })
        #expect(replayed.allSatisfy { $0["event"] as? String == "reachabilityChanged" && $0["previous"] is [String: Any] })
        // After a sequence number the history no longer holds: initial, reason resync.
        let resync = Self.reply(try call("Subscribe", #"{"after": 1}"#, more: 1).first, "Subscribe resync")?["event"] as? [String: Any]
        #expect(resync?["event"] as? String == "initial" && (resync?["reason"] as? [String: Any])?["code"] as? String == "resync")

        // The errors a client can meet.
        Self.expectError(try call("Subscribe", "{}").first, "io.reachd.Reachability.ExpectedMore")
        let invalid = try call("Subscribe", #"{"changes": ["nope"]}"#, more: 1).first
        Self.expectError(invalid, "org.varlink.service.InvalidParameter")
        #expect((invalid?["parameters"] as? [String: Any])?["parameter"] as? String == "changes")
        let unknownMethod = try Self.runScript(["call", socket, "Nope", "{}", "--extra-method", "Nope"]).first
        Self.expectError(unknownMethod, "org.varlink.service.MethodNotFound")
        errors.insert("org.varlink.service.MethodNotFound")
        // Simulate refused: nobody is neither root nor in [Simulation] Group=.
        Self.expectError(try call("Simulate", #"{"status": "wifi"}"#, user: "nobody").first, "io.reachd.Reachability.PermissionDenied")
        // A subscriber that stops reading while 400 events are made.
        let slow = try Self.runScript(["tooslow", socket, "400"])
        #expect(slow.dropLast().allSatisfy { $0["valid"] as? Bool == true } && slow.count > 1)
        Self.expectError(slow.last, "io.reachd.Reachability.SubscriberTooSlow")
        #expect(((slow.last?["parameters"] as? [String: Any])?["dropped"] as? Int ?? 0) > 0, "\(String(describing: slow.last))")
        errors.insert("io.reachd.Reachability.SubscriberTooSlow")

        // A second reachd on the same machine: the check off, one look-up at a time.
        let quiet = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig + "[Limits]\nMaxChecksInFlight=1\n")
        defer { quiet.stop() }
        let disabled = try Self.runScript(["call", quiet.socketPath, "Probe", "{}"]).first
        Self.expectError(disabled, "io.reachd.Reachability.ProbeDisabled")
        errors.formUnion([disabled?["error"] as? String].compactMap { $0 })
        // A resolver that never answers holds one look-up; the others are told to come back.
        try dns.set(.silent)
        let crowd = try Self.runScript(["busy", quiet.socketPath, "slow.example", "3"])
        let busy = crowd.first { $0["error"] as? String == "io.reachd.Reachability.Busy" }
        Self.expectError(busy, "io.reachd.Reachability.Busy")
        #expect(((busy?["parameters"] as? [String: Any])?["retryAfterMs"] as? Int ?? 0) > 0, "\(crowd)")
        #expect(crowd.allSatisfy { $0["valid"] as? Bool == true }, "\(crowd)")
        errors.formUnion(crowd.compactMap { $0["error"] as? String })

        // Every method and every error the description declares was met.
        #expect(Set(declaredMethods).isSubset(of: methods), "not called: \(Set(declaredMethods).subtracting(methods))")
        let declared = Set(declaredErrors.map { "\(Self.interface).\($0)" })
        #expect(declared.isSubset(of: errors), "not met: \(declared.subtracting(errors))")
        #expect(daemon.child.isRunning && quiet.child.isRunning)
    }
}
}
