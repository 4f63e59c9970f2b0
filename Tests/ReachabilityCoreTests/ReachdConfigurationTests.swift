import Foundation
import Testing
@testable import ReachabilityCore

/// In-memory files for `ReachdConfiguration.load`.
struct MemoryFiles: ConfigurationFileSource {
    var files: [String: String]
    var unreadable: Set<String> = []

    func contents(of path: String) throws(ConfigurationError) -> String? {
        if unreadable.contains(path) { throw ConfigurationError(file: path, message: "cannot read: Permission denied") }
        return files[path]
    }

    func fileNames(in directory: String) throws(ConfigurationError) -> [String] {
        files.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }
            .filter { !$0.contains("/") }
    }
}

struct ConfigCase: CustomTestStringConvertible, Sendable {
    let name: String
    let text: String
    let expected: @Sendable (inout ReachdConfiguration) -> Void
    var testDescription: String { name }
}

let configCases: [ConfigCase] = [
    ConfigCase(name: "empty file is the defaults", text: "") { _ in },
    ConfigCase(name: "comments only", text: "# [Monitor]\n; Debounce=5\n[Monitor]\n#Debounce=7\n") { _ in },
    ConfigCase(name: "every key", text: """
        [Monitor]
        IgnoreInterfaces=docker* veth*
        Debounce=250
        [Interfaces]
        Kind.wwan*=wwan
        Kind.wl*=wifi
        Metered=usb0 enx*
        [Connectivity]
        Enabled=no
        URL=http://127.0.0.1:8080/generate_204
        Response=Success
        Interval=60
        Timeout=2.5
        CAFile=/etc/reachd/ca.pem
        [Cellular]
        ModemManager=off
        [Socket]
        Path=/run/test/io.reachd.Reachability
        Mode=0660
        Group=netdev
        [Events]
        History=16
        [Limits]
        MaxConnections=100
        MaxConnectionsPerUser=10
        PartialMessageTimeout=2s
        MaxQueuedBytes=8M
        MaxChecksInFlight=8
        MaxChecksPerUser=2
        ProbeMinInterval=500ms
        """) { c in
        c.monitor.ignoreInterfaces = ["docker*", "veth*"]; c.monitor.debounceMilliseconds = 250
        c.interfaces.kinds = [.init(glob: "wwan*", kind: .wwan), .init(glob: "wl*", kind: .wifi)]
        c.interfaces.metered = ["usb0", "enx*"]
        c.connectivity.enabled = false; c.connectivity.url = "http://127.0.0.1:8080/generate_204"
        c.connectivity.response = "Success"; c.connectivity.intervalSeconds = 60; c.connectivity.timeoutSeconds = 2.5
        c.connectivity.caFile = "/etc/reachd/ca.pem"
        c.cellular.modemManager = false
        c.socket.path = "/run/test/io.reachd.Reachability"; c.socket.mode = 0o660; c.socket.group = "netdev"
        c.events.history = 16
        c.limits.maxConnections = 100; c.limits.maxConnectionsPerUser = 10; c.limits.partialMessageTimeoutSeconds = 2
        c.limits.maxQueuedBytes = 8 << 20; c.limits.maxChecksInFlight = 8; c.limits.maxChecksPerUser = 2
        c.limits.probeMinIntervalSeconds = 0.5
    },
    ConfigCase(name: "limits at their bounds", text: """
        [Monitor]
        Debounce=1h
        [Connectivity]
        Interval=168h
        Timeout=3600
        [Events]
        History=65536
        [Limits]
        MaxConnections=65536
        MaxConnectionsPerUser=1
        PartialMessageTimeout=100ms
        MaxQueuedBytes=1G
        MaxChecksInFlight=256
        MaxChecksPerUser=1
        ProbeMinInterval=1h
        """) { c in
        c.monitor.debounceMilliseconds = 3_600_000; c.connectivity.intervalSeconds = 7 * 86400; c.connectivity.timeoutSeconds = 3600
        c.events.history = 65536
        c.limits.maxConnections = 65536; c.limits.maxConnectionsPerUser = 1; c.limits.partialMessageTimeoutSeconds = 0.1
        c.limits.maxQueuedBytes = 1 << 30; c.limits.maxChecksInFlight = 256; c.limits.maxChecksPerUser = 1
        c.limits.probeMinIntervalSeconds = 3600
    },
    ConfigCase(name: "sizes in bytes and lower-case suffixes", text: "[Limits]\nMaxQueuedBytes=2097152\nMaxQueuedBytes=3m\n") { c in
        c.limits.maxQueuedBytes = 3 << 20
    },
    ConfigCase(name: "duplicate plain key: later wins", text: "[Events]\nHistory=1\nHistory=2\n[Events]\nHistory=3\n") { c in
        c.events.history = 3
    },
    ConfigCase(name: "list key accumulates", text: "[Monitor]\nIgnoreInterfaces=a b\nIgnoreInterfaces=c\n") { c in
        c.monitor.ignoreInterfaces = ["a", "b", "c"]
    },
    ConfigCase(name: "empty value resets a list", text: "[Interfaces]\nMetered=a\nMetered=\nMetered=b\n") { c in
        c.interfaces.metered = ["b"]
    },
    ConfigCase(name: "empty value resets a plain key", text: "[Connectivity]\nInterval=10\nInterval=\nURL=http://x/\nURL=\n") { _ in },
    ConfigCase(name: "empty Path and Group reset to nil", text: "[Socket]\nPath=/x\nGroup=g\nPath=\nGroup=\n") { _ in },
    ConfigCase(name: "kinds keep file order; re-assigning keeps the place", text: "[Interfaces]\nKind.a*=wifi\nKind.b*=vpn\nKind.a*=wwan\n") { c in
        c.interfaces.kinds = [.init(glob: "a*", kind: .wwan), .init(glob: "b*", kind: .vpn)]
    },
    ConfigCase(name: "empty kind removes that glob", text: "[Interfaces]\nKind.a*=wifi\nKind.b*=vpn\nKind.a*=\n") { c in
        c.interfaces.kinds = [.init(glob: "b*", kind: .vpn)]
    },
    ConfigCase(name: "every kind name", text: InterfaceKind.allCases.map { "[Interfaces]\nKind.\($0.rawValue)0=\($0.rawValue)" }.joined(separator: "\n")) { c in
        c.interfaces.kinds = InterfaceKind.allCases.map { .init(glob: "\($0.rawValue)0", kind: $0) }
    },
    ConfigCase(name: "booleans as systemd", text: "[Connectivity]\nEnabled=0\n[Cellular]\nModemManager=TRUE\n") { c in
        c.connectivity.enabled = false
    },
    ConfigCase(name: "time spans with units", text: "[Monitor]\nDebounce=1.5s\n[Connectivity]\nInterval=5min\nTimeout=500ms\n") { c in
        c.monitor.debounceMilliseconds = 1500; c.connectivity.intervalSeconds = 300; c.connectivity.timeoutSeconds = 0.5
    },
    ConfigCase(name: "standby checks: every uplink, every 25 minutes", text: "[Connectivity]\nCheckStandby=yes\nStandbyInterval=25min\n") { c in
        c.connectivity.checkStandby = .yes; c.connectivity.standbyIntervalSeconds = 1500
    },
    ConfigCase(name: "standby checks: off as a boolean, unmetered in any case, empty resets",
               text: "[Connectivity]\nCheckStandby=off\nCheckStandby=Unmetered\nStandbyInterval=60\nStandbyInterval=\n") { c in
        c.connectivity.checkStandby = .unmetered; c.connectivity.standbyIntervalSeconds = nil
    },
    ConfigCase(name: "time span with a space before the unit", text: "[Connectivity]\nInterval=2 h\n") { c in
        c.connectivity.intervalSeconds = 7200
    },
    ConfigCase(name: "URL with IPv6 literal, port and query", text: "[Connectivity]\nURL=HTTP://[::1]:8080/generate_204?x=1\n") { c in
        c.connectivity.url = "HTTP://[::1]:8080/generate_204?x=1"
    },
    // https loads, as NetworkManager accepts it; the checker warns and reports `unknown` (no TLS).
    ConfigCase(name: "https URL loads", text: "[Connectivity]\nURL=https://example.com/check\n") { c in
        c.connectivity.url = "https://example.com/check"
    },
    ConfigCase(name: "mode without leading zero, zero history", text: "[Socket]\nMode=600\n[Events]\nHistory=0\n") { c in
        c.socket.mode = 0o600; c.events.history = 0
    },
    ConfigCase(name: "response keeps inner spaces", text: "[Connectivity]\nResponse=  Microsoft Connect Test \n") { c in
        c.connectivity.response = "Microsoft Connect Test"
    },
]

struct ConfigErrorCase: CustomTestStringConvertible, Sendable {
    let text: String
    let message: String
    var testDescription: String { message }
}

let configErrorCases: [ConfigErrorCase] = [
    .init(text: "[Monitr]\nDebounce=1\n",
          message: "r.conf:1: [Monitr] unknown section (expected one of [Monitor] [Interfaces] [Connectivity] [Cellular] [LinkQuality] [DataStall] [Socket] [Events] [Simulation] [Limits] [Metrics]) (did you mean [Monitor]?)"),
    // A slip of the keyboard gets a suggestion too; a name nowhere near one gets none.
    .init(text: "[Connectivity]\nIntervall=60\n",
          message: "r.conf:2: [Connectivity] Intervall=60: unknown key in section [Connectivity] (did you mean Interval=?)"),
    .init(text: "[Connectivity]\nTimeuot=5\n",
          message: "r.conf:2: [Connectivity] Timeuot=5: unknown key in section [Connectivity] (did you mean Timeout=?)"),
    .init(text: "[Connectivity]\nUrl=http://x/\n",
          message: "r.conf:2: [Connectivity] Url=http://x/: unknown key in section [Connectivity] (did you mean URL=?)"),
    .init(text: "[Conectivity]\n",
          message: "r.conf:1: [Conectivity] unknown section (expected one of [Monitor] [Interfaces] [Connectivity] [Cellular] [LinkQuality] [DataStall] [Socket] [Events] [Simulation] [Limits] [Metrics]) (did you mean [Connectivity]?)"),
    .init(text: "[Interfaces]\nKnid.eth0=wifi\n",
          message: "r.conf:2: [Interfaces] Knid.eth0=wifi: unknown key in section [Interfaces] (did you mean Kind.=?)"),
    .init(text: "[Connectivity]\nProxy=x\n", message: "r.conf:2: [Connectivity] Proxy=x: unknown key in section [Connectivity]"),
    .init(text: "[monitor]\n",
          message: "r.conf:1: [monitor] unknown section (expected one of [Monitor] [Interfaces] [Connectivity] [Cellular] [LinkQuality] [DataStall] [Socket] [Events] [Simulation] [Limits] [Metrics]) (did you mean [Monitor]?)"),
    .init(text: "[Monitor]\nFoo=1\n", message: "r.conf:2: [Monitor] Foo=1: unknown key in section [Monitor]"),
    .init(text: "[Connectivity]\nCheckStandby=metered\n",
          message: "r.conf:2: [Connectivity] CheckStandby=metered: bad value (expected yes, no or unmetered)"),
    .init(text: "[Connectivity]\nStandbyInterval=0\n",
          message: "r.conf:2: [Connectivity] StandbyInterval=0: bad time span (must be greater than 0)"),
    .init(text: "[Monitor]\ndebounce=1\n", message: "r.conf:2: [Monitor] debounce=1: unknown key in section [Monitor] (did you mean Debounce=?)"),
    .init(text: "[Monitor]\nMetered=x\n", message: "r.conf:2: [Monitor] Metered=x: unknown key in section [Monitor]"),
    .init(text: "[Interfaces]\nkind.x=wifi\n", message: "r.conf:2: [Interfaces] kind.x=wifi: unknown key in section [Interfaces] (did you mean Kind.=?)"),
    .init(text: "[Connectivity]\nEnabled=maybe\n",
          message: "r.conf:2: [Connectivity] Enabled=maybe: bad boolean (expected yes/no, true/false, on/off or 1/0)"),
    .init(text: "[Cellular]\nModemManager=2\n",
          message: "r.conf:2: [Cellular] ModemManager=2: bad boolean (expected yes/no, true/false, on/off or 1/0)"),
    .init(text: "[Monitor]\nDebounce=soon\n",
          message: "r.conf:2: [Monitor] Debounce=soon: bad time span (expected milliseconds, e.g. 200 or 1.5s)"),
    .init(text: "[Monitor]\nDebounce=-5\n",
          message: "r.conf:2: [Monitor] Debounce=-5: bad time span (expected milliseconds, e.g. 200 or 1.5s)"),
    .init(text: "[Connectivity]\nInterval=5 fortnights\n",
          message: "r.conf:2: [Connectivity] Interval=5 fortnights: bad time span (expected seconds, e.g. 300 or 5min)"),
    .init(text: "[Connectivity]\nInterval=0\n",
          message: "r.conf:2: [Connectivity] Interval=0: bad time span (must be greater than 0)"),
    .init(text: "[Connectivity]\nTimeout=x\n",
          message: "r.conf:2: [Connectivity] Timeout=x: bad time span (expected seconds, e.g. 5 or 2.5s)"),
    .init(text: "[Connectivity]\nURL=ftp://example.com/\n",
          message: "r.conf:2: [Connectivity] URL=ftp://example.com/: bad URL: scheme ftp is not http or https (expected http://HOST[:PORT]/PATH or https://…)"),
    .init(text: "[Connectivity]\nURL=http:///path\n",
          message: "r.conf:2: [Connectivity] URL=http:///path: bad URL: no host (expected http://HOST[:PORT]/PATH or https://…)"),
    .init(text: "[Connectivity]\nURL=connectivity-check.ubuntu.com\n",
          message: "r.conf:2: [Connectivity] URL=connectivity-check.ubuntu.com: bad URL: not an absolute URL (expected http://HOST[:PORT]/PATH or https://…)"),
    .init(text: "[Connectivity]\nURL=http://h:70000/\n",
          message: "r.conf:2: [Connectivity] URL=http://h:70000/: bad URL: port 70000 out of range (expected http://HOST[:PORT]/PATH or https://…)"),
    .init(text: "[Connectivity]\nURL=http://a b/\n",
          message: "r.conf:2: [Connectivity] URL=http://a b/: bad URL: contains white space (expected http://HOST[:PORT]/PATH or https://…)"),
    .init(text: "[Interfaces]\nKind.eth*=fiber\n",
          message: "r.conf:2: [Interfaces] Kind.eth*=fiber: bad kind (expected one of loopback, ethernet, wifi, wwan, vpn, bridge, virtual, other)"),
    .init(text: "[Interfaces]\nKind.eth*=WiFi\n",
          message: "r.conf:2: [Interfaces] Kind.eth*=WiFi: bad kind (expected one of loopback, ethernet, wifi, wwan, vpn, bridge, virtual, other)"),
    .init(text: "[Interfaces]\nKind.=wifi\n",
          message: "r.conf:2: [Interfaces] Kind.=wifi: missing interface glob after 'Kind.' (expected e.g. Kind.wwan*=wwan)"),
    .init(text: "[Socket]\nMode=0689\n", message: "r.conf:2: [Socket] Mode=0689: bad octal mode (expected e.g. 0666 or 0660)"),
    .init(text: "[Socket]\nMode=17777\n", message: "r.conf:2: [Socket] Mode=17777: bad octal mode (expected e.g. 0666 or 0660)"),
    .init(text: "[Socket]\nMode=rw\n", message: "r.conf:2: [Socket] Mode=rw: bad octal mode (expected e.g. 0666 or 0660)"),
    .init(text: "[Socket]\nPath=run/x\n", message: "r.conf:2: [Socket] Path=run/x: bad path (must be absolute)"),
    .init(text: "[Connectivity]\nCAFile=ca.pem\n", message: "r.conf:2: [Connectivity] CAFile=ca.pem: bad path (must be absolute)"),
    .init(text: "[Socket]\nGroup=a b\n", message: "r.conf:2: [Socket] Group=a b: bad group name"),
    .init(text: "[Events]\nHistory=many\n", message: "r.conf:2: [Events] History=many: bad number (expected an integer from 0 to 65536)"),
    .init(text: "[Events]\nHistory=-1\n", message: "r.conf:2: [Events] History=-1: bad number (expected an integer from 0 to 65536)"),
    // Out of range: refused when read, so that nothing traps later (a conversion to
    // milliseconds or to a Dispatch deadline).
    .init(text: "[Monitor]\nDebounce=99999999999999999999\n",
          message: "r.conf:2: [Monitor] Debounce=99999999999999999999: time span out of range (0 to 1h)"),
    .init(text: "[Monitor]\nDebounce=1e30\n",
          message: "r.conf:2: [Monitor] Debounce=1e30: bad time span (expected milliseconds, e.g. 200 or 1.5s)"),
    .init(text: "[Monitor]\nDebounce=61min\n", message: "r.conf:2: [Monitor] Debounce=61min: time span out of range (0 to 1h)"),
    .init(text: "[Connectivity]\nInterval=99999999999999999999\n",
          message: "r.conf:2: [Connectivity] Interval=99999999999999999999: time span out of range (at most 7 days)"),
    .init(text: "[Connectivity]\nInterval=169h\n", message: "r.conf:2: [Connectivity] Interval=169h: time span out of range (at most 7 days)"),
    .init(text: "[Connectivity]\nTimeout=99999999999999999999s\n",
          message: "r.conf:2: [Connectivity] Timeout=99999999999999999999s: time span out of range (at most 1h)"),
    .init(text: "[Events]\nHistory=99999999999999999999\n",
          message: "r.conf:2: [Events] History=99999999999999999999: bad number (expected an integer from 0 to 65536)"),
    .init(text: "[Events]\nHistory=65537\n", message: "r.conf:2: [Events] History=65537: bad number (expected an integer from 0 to 65536)"),
    .init(text: "[Limits]\nMaxConnections=0\n", message: "r.conf:2: [Limits] MaxConnections=0: bad number (expected an integer from 1 to 65536)"),
    .init(text: "[Limits]\nMaxConnectionsPerUser=99999999999999999999\n",
          message: "r.conf:2: [Limits] MaxConnectionsPerUser=99999999999999999999: bad number (expected an integer from 1 to 65536)"),
    .init(text: "[Limits]\nMaxChecksInFlight=257\n", message: "r.conf:2: [Limits] MaxChecksInFlight=257: bad number (expected an integer from 1 to 256)"),
    .init(text: "[Limits]\nMaxChecksPerUser=-1\n", message: "r.conf:2: [Limits] MaxChecksPerUser=-1: bad number (expected an integer from 1 to 256)"),
    .init(text: "[Limits]\nPartialMessageTimeout=0\n",
          message: "r.conf:2: [Limits] PartialMessageTimeout=0: time span out of range (100ms to 1h)"),
    .init(text: "[Limits]\nProbeMinInterval=99999999999999999999\n",
          message: "r.conf:2: [Limits] ProbeMinInterval=99999999999999999999: time span out of range (100ms to 1h)"),
    .init(text: "[Limits]\nMaxQueuedBytes=99999999999999999999\n",
          message: "r.conf:2: [Limits] MaxQueuedBytes=99999999999999999999: bad size (expected bytes, or with K, M or G, e.g. 64M)"),
    .init(text: "[Limits]\nMaxQueuedBytes=9999999999G\n", message: "r.conf:2: [Limits] MaxQueuedBytes=9999999999G: size out of range (1M to 1G)"),
    .init(text: "[Limits]\nMaxQueuedBytes=2T\n",
          message: "r.conf:2: [Limits] MaxQueuedBytes=2T: bad size (expected bytes, or with K, M or G, e.g. 64M)"),
    .init(text: "[Limits]\nMaxQueuedBytes=1K\n", message: "r.conf:2: [Limits] MaxQueuedBytes=1K: size out of range (1M to 1G)"),
    .init(text: "Debounce=1\n", message: "r.conf:1: Debounce=1: assignment outside of any section"),
    .init(text: "[Monitor]\n\n# ok\nDebounce=1\nDebounce\n", message: "r.conf:5: missing '=' in 'Debounce' (expected Key=Value)"),
]

private func parseError(_ body: () throws(ConfigurationError) -> ReachdConfiguration) -> ConfigurationError? {
    do { _ = try body(); return nil } catch { return error }
}

@Suite struct ReachdConfigurationTests {
    @Test func defaults() {
        let c = ReachdConfiguration()
        #expect(c.monitor.ignoreInterfaces == [] && c.monitor.debounceMilliseconds == 0)
        #expect(c.interfaces.kinds == [] && c.interfaces.metered == [])
        #expect(c.connectivity.enabled && c.connectivity.url == "http://connectivity-check.ubuntu.com/")
        #expect(c.connectivity.response == "" && c.connectivity.intervalSeconds == 300 && c.connectivity.timeoutSeconds == 5)
        #expect(c.cellular.modemManager)
        #expect(c.socket.path == nil && c.socket.mode == 0o666 && c.socket.group == nil)
        #expect(c.events.history == 256)
        #expect(c.limits.maxConnections == 4096 && c.limits.maxConnectionsPerUser == 1024)
        #expect(c.limits.partialMessageTimeoutSeconds == 10 && c.limits.maxQueuedBytes == 64 << 20)
        #expect(c.limits.maxChecksInFlight == 16 && c.limits.maxChecksPerUser == 4 && c.limits.probeMinIntervalSeconds == 1)
    }

    @Test(arguments: configCases)
    func parses(_ c: ConfigCase) throws {
        var expected = ReachdConfiguration()
        c.expected(&expected)
        #expect(try ReachdConfiguration.parse(c.text, file: "r.conf") == expected)
    }

    @Test(arguments: configErrorCases)
    func rejects(_ c: ConfigErrorCase) {
        let error = parseError { () throws(ConfigurationError) in try ReachdConfiguration.parse(c.text, file: "r.conf") }
        #expect(error?.description == c.message)
    }

    @Test func errorCarriesFileLineSectionKey() {
        let error = parseError { () throws(ConfigurationError) in
            try ReachdConfiguration.parse("[Events]\n\nHistory=x\n", file: "/etc/reachd/reachd.conf")
        }
        #expect(error?.file == "/etc/reachd/reachd.conf")
        #expect(error?.line == 3)
        #expect(error?.section == "Events")
        #expect(error?.key == "History")
        #expect(error?.value == "x")
    }

    @Test func missingMainFileIsTheDefaults() throws {
        #expect(try ReachdConfiguration.load(mainFile: "/etc/reachd/reachd.conf", source: MemoryFiles(files: [:])) == ReachdConfiguration())
    }

    @Test func missingMainFileThatMustExist() {
        let error = parseError { () throws(ConfigurationError) in
            try ReachdConfiguration.load(mainFile: "/x/reachd.conf", mustExist: true, source: MemoryFiles(files: [:]))
        }
        #expect(error?.description == "/x/reachd.conf: no such file")
    }

    @Test func dropInsApplyInLexicalOrderAndOverride() throws {
        let files = MemoryFiles(files: [
            "/e/reachd.conf": "[Events]\nHistory=1\n[Connectivity]\nInterval=10\n[Monitor]\nIgnoreInterfaces=a\n",
            "/e/reachd.conf.d/20-b.conf": "[Events]\nHistory=20\n[Monitor]\nIgnoreInterfaces=c\n",
            "/e/reachd.conf.d/10-a.conf": "[Events]\nHistory=10\n[Connectivity]\nTimeout=3\n[Monitor]\nIgnoreInterfaces=b\n",
            "/e/reachd.conf.d/9-z.conf": "[Events]\nHistory=9\n",          // "9" sorts after "2"
            "/e/reachd.conf.d/30-ignored.txt": "[Events]\nHistory=30\n",   // not *.conf
            "/e/reachd.conf.d/.hidden.conf": "[Events]\nHistory=31\n",
            "/e/other.conf.d/x.conf": "[Events]\nHistory=40\n",            // another main file's drop-ins
        ])
        #expect(try ReachdConfiguration.dropIns(for: "/e/reachd.conf", in: files)
                == ["/e/reachd.conf.d/10-a.conf", "/e/reachd.conf.d/20-b.conf", "/e/reachd.conf.d/9-z.conf"])
        let c = try ReachdConfiguration.load(mainFile: "/e/reachd.conf", source: files)
        var expected = ReachdConfiguration()
        expected.events.history = 9
        expected.connectivity.intervalSeconds = 10
        expected.connectivity.timeoutSeconds = 3
        expected.monitor.ignoreInterfaces = ["a", "b", "c"]
        #expect(c == expected)
    }

    @Test func dropInsWithoutMainFile() throws {
        let files = MemoryFiles(files: ["/e/reachd.conf.d/a.conf": "[Cellular]\nModemManager=no\n"])
        #expect(try ReachdConfiguration.load(mainFile: "/e/reachd.conf", source: files).cellular.modemManager == false)
    }

    @Test func dropInCanResetAList() throws {
        let files = MemoryFiles(files: [
            "/e/reachd.conf": "[Interfaces]\nMetered=usb*\n",
            "/e/reachd.conf.d/a.conf": "[Interfaces]\nMetered=\nMetered=enx*\n",
        ])
        #expect(try ReachdConfiguration.load(mainFile: "/e/reachd.conf", source: files).interfaces.metered == ["enx*"])
    }

    @Test func errorInADropInNamesTheDropIn() {
        let files = MemoryFiles(files: [
            "/e/reachd.conf": "[Events]\nHistory=1\n",
            "/e/reachd.conf.d/a.conf": "[Events]\n# comment\nHistory=lots\n",
        ])
        let error = parseError { () throws(ConfigurationError) in try ReachdConfiguration.load(mainFile: "/e/reachd.conf", source: files) }
        #expect(error?.description == "/e/reachd.conf.d/a.conf:3: [Events] History=lots: bad number (expected an integer from 0 to 65536)")
    }

    @Test func unreadableFileIsAnError() {
        let files = MemoryFiles(files: ["/e/reachd.conf": ""], unreadable: ["/e/reachd.conf"])
        let error = parseError { () throws(ConfigurationError) in try ReachdConfiguration.load(mainFile: "/e/reachd.conf", source: files) }
        #expect(error?.description == "/e/reachd.conf: cannot read: Permission denied")
    }

    @Test func parseBuildsOnABase() throws {
        var base = ReachdConfiguration()
        base.events.history = 5
        let c = try ReachdConfiguration.parse("[Socket]\nMode=0600\n", file: "x", into: base)
        #expect(c.events.history == 5 && c.socket.mode == 0o600)
    }
}

/// `config/reachd.conf` documents every key with its default, and only keys that exist.
@Suite struct DocumentedConfigurationTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../config/reachd.conf").standardized.path

    /// The documented file with its `#Key=Value` lines uncommented.
    static func uncommented() throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            // "#Key=" with no space after '#': a commented-out setting; "# words": prose.
            if line.hasPrefix("#"), let second = line.dropFirst().first, second.isUppercase, line.contains("=") {
                return String(line.dropFirst())
            }
            return String(line)
        }.joined(separator: "\n")
    }

    @Test func documentedFileParsesAsIsToTheDefaults() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(try ReachdConfiguration.parse(text, file: Self.path) == ReachdConfiguration())
    }

    @Test func documentedDefaultsAreTheBuiltInDefaults() throws {
        var c = try ReachdConfiguration.parse(try Self.uncommented(), file: Self.path)
        #expect(c.interfaces.kinds == [.init(glob: "wwan*", kind: .wwan)])   // the documented example
        c.interfaces.kinds = []
        #expect(c == ReachdConfiguration())
    }

    @Test func everyKeyIsDocumentedAndEveryDocumentedKeyExists() throws {
        let ini = try INIParser.parse(try Self.uncommented(), file: Self.path)
        let documented = Set(ini.assignments.map { a in
            "[\(a.section)] " + (a.key.hasPrefix("Kind.") ? "Kind." : a.key)
        })
        let known = Set(ReachdConfiguration.keys.map { "[\($0.section)] \($0.name)" })
        #expect(documented == known)
        #expect(ini.sections.map(\.name) == ReachdConfiguration.sections)
        #expect(Set(ReachdConfiguration.keys.map(\.section)) == Set(ReachdConfiguration.sections))
    }
}

/// The shipped unit's resource limits leave room for the `[Limits]` defaults: a limit of the
/// unit below what the daemon may spend would turn a bounded flood into a crash or a wedge.
@Suite struct UnitLimitsAgreeTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../systemd/reachd.service").standardized.path

    static func value(_ key: String) throws -> String {
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(key + "=") }, "no \(key)= in \(unit)")
        return String(line.dropFirst(key.count + 1))
    }

    static func bytes(_ value: String) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = value.last, let factor = units[last] { return try #require(Int(value.dropLast())) * factor }
        return try #require(Int(value))
    }

    @Test func unitLimitsCoverTheConfiguredLimits() throws {
        let limits = ReachdConfiguration().limits
        // Client connections, plus the listening socket, netlink, D-Bus, probes, journal, …
        #expect(try #require(Int(Self.value("LimitNOFILE"))) >= limits.maxConnections + 64)
        // Look-up threads, the connectivity check's 4, the netlink reader, main, libdispatch's pool.
        #expect(try #require(Int(Self.value("TasksMax"))) >= limits.maxChecksInFlight + 4 + 2 + 64)
        // Unsent replies, unanswered requests (16 MiB), and the daemon itself (about 32 MiB).
        #expect(try Self.bytes(Self.value("MemoryMax")) >= limits.maxQueuedBytes + (16 << 20) + (64 << 20))
    }
}

/// The distance behind "did you mean": typing slips count 1 each.
@Suite struct NameSuggestionTests {
    @Test(arguments: [
        ("Interval", "Interval", 0), ("Intervall", "Interval", 1), ("Timeuot", "Timeout", 1), ("Debounce", "debounce", 1),
        ("", "abc", 3), ("abc", "", 3), ("kitten", "sitting", 3), ("ab", "ba", 1),
    ])
    func distance(_ a: String, _ b: String, _ expected: Int) {
        #expect(NameSuggestion.editDistance(a, b) == expected)
        #expect(NameSuggestion.editDistance(b, a) == expected)
    }

    @Test(arguments: [
        ("interval", "Interval"), ("Intervall", "Interval"), ("Intreval", "Interval"), ("StandbyIntervl", "StandbyInterval"),
        ("Kind.eth0", "Kind."), ("Kinf.eth0", "Kind."), ("URl", "URL"), ("Zzz", nil), ("Proxy", nil),
    ] as [(String, String?)])
    func closest(_ name: String, _ expected: String?) {
        let known = ["Enabled", "URL", "Response", "Interval", "Timeout", "StandbyInterval", "Kind."]
        #expect(NameSuggestion.closest(to: name, among: known) == expected)
    }
}
