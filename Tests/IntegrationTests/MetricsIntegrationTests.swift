import Foundation
import ReachabilityCore
import ReachabilitySystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

let contribPrometheus = Binaries.packageRoot + "/contrib/prometheus"

/// The sample lines of a Prometheus text exposition: series → value.
func metricSamples(_ text: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        result[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return result
}

/// Runs `promtool check metrics` on `text`; its exit status and output.
func promtoolCheckMetrics(_ text: String) throws -> (status: Int32, output: String) {
    let directory = try temporaryDirectory()
    defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
    try text.write(toFile: directory + "/m.prom", atomically: true, encoding: .utf8)
    return try sh("\(try promtoolPath()) check metrics < '\(directory)/m.prom'", check: false)
}

/// `Tests/python/metrics_client.py` in a namespace: one scenario, its JSON answer.
func metricsClient(in namespace: TestNamespace, _ arguments: [String], timeout: TimeInterval = 40) throws -> [String: Any] {
    let script = Binaries.packageRoot + "/Tests/python/metrics_client.py"
    let result = try run(ipCommand, ["netns", "exec", namespace.name, "python3", script] + arguments, timeout: timeout)
    guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
        throw SetupError(description: "metrics_client.py \(arguments.joined(separator: " ")) exited \(result.status): \(result.stdout) \(result.stderr)")
    }
    return object
}

/// `curl` in a namespace; the body, or nil when it failed. (A newline is added: `Child` collects
/// whole lines only.)
func curl(in namespace: TestNamespace, _ url: String) -> String? {
    guard let result = try? run(ipCommand, ["netns", "exec", namespace.name, "curl", "-sf", "--max-time", "10", "-w", "\\n", url], timeout: 15),
          result.status == 0 else { return nil }
    return result.stdout
}

/// The files `promtool` checks without a daemon: the shipped rules against their unit tests, the
/// scrape example, and the exposition with every optional metric present.
@Suite struct PrometheusContribTests {
    @Test(.requires(.promtool)) func shippedAlertRulesPassTheirUnitTests() throws {
        let promtool = try promtoolPath()
        let result = try sh("cd '\(contribPrometheus)' && \(promtool) test rules reachd-alerts.test.yml", check: false)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("SUCCESS"))
        let rules = try sh("\(promtool) check rules '\(contribPrometheus)/reachd-alerts.yml'", check: false)
        #expect(rules.status == 0 && rules.output.contains("6 rules found"), "\(rules.output)")
    }

    @Test(.requires(.promtool)) func scrapeExampleIsAValidConfiguration() throws {
        let promtool = try promtoolPath()
        let result = try sh("\(promtool) check config '\(contribPrometheus)/prometheus.yml'", check: false)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("1 rule files found"))
    }

    @Test(.requires(.promtool)) func expositionWithEveryMetricIsLintClean() throws {
        let wlan = Interface(name: "wlan0", index: 5, kind: .wifi, up: true, carrier: true, operstate: "up", addresses: [], metered: false,
                             wifi: WiFi(ssid: "cafe", bssid: "02:11:22:33:44:55", frequencyMHz: 5180, band: .band5GHz, signalDbm: -61,
                                        strengthPercent: 59, bars: 3, txBitrateKbps: 866_700, owner: .iwd))
        let interface = Interface(name: "wwan0", index: 3, kind: .wwan, up: true, carrier: true, operstate: "up", addresses: [], metered: false)
        let status = Status(status: .wwan2G, reachable: true, connectivity: .portal, primary: interface,
                            vpn: Interface(name: "tun0", index: 4, kind: .vpn, up: true, carrier: true, operstate: "up", addresses: [], metered: false),
                            cellular: Cellular(generation: "2G", accessTechnology: "edge", modem: "/org/freedesktop/ModemManager1/Modem/0",
                                               interface: "wwan0", signalQuality: 40, roaming: false),
                            expensive: true, ipv4: true, ipv6: true, gateways: [], flags: [.reachable, .isWWAN],
                            interfaces: [interface, wlan], probe: nil, since: Date())
        var recorder = MetricsRecorder(status: status, now: 0, startedAt: Date())
        recorder.recordProbe(Probe(url: "http://x/", result: .portal, httpStatus: 302, rttMs: 40, checkedAt: Date()))
        // A data stall on the primary, for the stall gauge and counter.
        var stalled = status
        stalled.interfaces[0].stall = DataStall(since: Date(), method: .tcp, failRate: 0.9, sentSinceReceive: 30, periodMs: 10_000)
        stalled.primary = stalled.interfaces[0]
        recorder.replaceStatus(stalled, now: 1_000_000_000)
        let text = PrometheusExposition.render(recorder.sample(now: 5_000_000_000, version: ReachdVersion.string, subscribers: 2,
                                                               connectionsRejected: ["protocol_error": 1], netlinkOverruns: 1))
        #expect(text.contains("reachd_cellular_generation 2"))
        #expect(text.contains(#"reachd_interface_stalled{interface="wwan0"} 1"#))
        #expect(text.contains(#"reachd_data_stalls_total{interface="wwan0"} 1"#))
        #expect(text.contains(#"reachd_wifi_station_signal_dbm{interface="wlan0"} -61"#))
        let lint = try promtoolCheckMetrics(text)
        #expect(lint.status == 0 && lint.output.isEmpty, "\(lint.output)")
    }
}

extension ServiceSystemTests {
/// The metrics of a running reachd: `GET /metrics` across a veth from the uplink namespace (as
/// Prometheus would scrape), the responder under bad requests, and `reachd.prom`.
@Suite struct MetricsDaemonTests {
    static func config(listen: String? = "10.77.0.2:9464", textfile: String? = nil, interval: Int? = nil) -> String {
        var text = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n[Metrics]\n"
        if let listen { text += "Listen=\(listen)\n" }
        if let textfile { text += "TextfileDirectory=\(textfile)\n" }
        if let interval { text += "TextfileInterval=\(interval)\n" }
        return text
    }

    /// One scrape, the way Prometheus makes it, checked by promtool; its samples.
    static func scrape(from namespace: TestNamespace, _ address: String = "10.77.0.2:9464") throws -> [String: String] {
        let answer = try metricsClient(in: namespace, ["get"] + address.split(separator: ":").map(String.init))
        #expect(answer["status"] as? Int == 200)
        let headers = answer["headers"] as? [String: String] ?? [:]
        #expect(headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let body = answer["body"] as? String ?? ""
        let lint = try promtoolCheckMetrics(body)
        #expect(lint.status == 0 && lint.output.isEmpty, "promtool check metrics: \(lint.output)")
        return metricSamples(body)
    }

    /// 20 connections that never send a request, from 20 addresses (past the per-address
    /// bound, and more than the 16 places): a scrape made while they are held is answered 200.
    @Test(.needsRoot()) func idleSocketsDoNotDenyScrapes() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let sources = (101...120).map { "10.77.0.\($0)" }
        for source in sources { try uplink.ip("addr add \(source)/24 dev up0") }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config())
        defer { _ = daemon.stop() }
        let answer = try metricsClient(in: uplink, ["crowd", "10.77.0.2", "9464", "20"] + sources)
        #expect(answer["status"] as? Int == 200, "\(answer)")
        // The idle ones kept their places but those the scrape needed (at most 16 open at once).
        #expect((answer["open"] as? Int ?? 99) <= 15, "\(answer)")
        // From one address alone: 20 idle connections, then a scrape from that same address.
        let single = try metricsClient(in: uplink, ["crowd", "10.77.0.2", "9464", "20", "10.77.0.1"])
        #expect(single["status"] as? Int == 200, "\(single)")
        #expect((single["open"] as? Int ?? 99) <= 4, "\(single)")
    }

    @Test(.needsRoot(), .requires(.promtool)) func scrapeFollowsTheNetworkAndBadRequestsChangeNothing() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let link = try VethUplink(host: host, uplink: uplink)
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config())
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 })

        var metrics = try Self.scrape(from: uplink)
        #expect(metrics["reachd_reachable"] == "1")
        #expect(metrics[#"reachd_status{status="ethernet"}"#] == "1")
        #expect(metrics[#"reachd_primary_info{interface="eth0",kind="ethernet"}"#] == "1")
        #expect(metrics[#"reachd_connectivity{state="unknown"}"#] == "1")
        #expect(metrics["reachd_subscribers"] == "1")
        #expect(metrics[#"reachd_info{version="\#(ReachdVersion.string)"}"#] == "1")

        // Every kind of bad request gets its refusal, and nothing else happens.
        let address = ["10.77.0.2", "9464"]
        let refusals: [([String], Int)] = [
            (["get"] + address + ["/metrics", "POST"], 405),
            (["get"] + address + ["/metrics", "DELETE"], 405),
            (["get"] + address + ["/"], 404),
            (["get"] + address + ["/admin"], 404),
            (["raw"] + address + [Data("\u{1}garbage\r\n\r\n".utf8).hex], 400),
            (["raw"] + address + [Data("GET /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody".utf8).hex], 400),
            (["raw"] + address + [Data("GET /metrics HTTP/2.0\r\n\r\n".utf8).hex], 505),
            (["raw"] + address + ["160301020001"], 400),   // a TLS hello cut short, then the client hangs up
            (["huge"] + address + ["100000"], 431),
        ]
        for (arguments, status) in refusals {
            let answer = try metricsClient(in: uplink, arguments)
            #expect(answer["status"] as? Int == status, "\(arguments.prefix(1)) \(arguments.dropFirst(3)): \(answer)")
        }

        // A slowloris; meanwhile the network changes and the subscriber hears of it without
        // delay (no timing asserted: it arrives at all, before the slowloris is dealt with).
        let slowloris = try Child(ipCommand, ["netns", "exec", uplink.name, "python3", Binaries.packageRoot + "/Tests/python/metrics_client.py",
                                              "slowloris"] + address)
        #expect(waitUntil(timeout: 10) { slowloris.stderr.contains("connected") }, "\(slowloris.stderr)")
        // The default route goes (the link stays, so the scraper still reaches the daemon).
        try host.ip("route del default")
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains(#""code":"routeRemoved""#) } }, "\(monitor.lines)")
        #expect(slowloris.isRunning, "the slowloris was answered before the event arrived")
        // With the slowloris, 15 idle connections fill the 16 places: the next takes the place of
        // the oldest still without its request (the slowloris, if its time has not run out), and
        // is answered.
        let crowd = try Child(ipCommand, ["netns", "exec", uplink.name, "python3", Binaries.packageRoot + "/Tests/python/metrics_client.py",
                                          "hold"] + address + ["15", "2"])
        #expect(crowd.wait(timeout: 30) == 0, "\(crowd.stderr)")
        let held = try JSONSerialization.jsonObject(with: Data(crowd.lines.joined().utf8)) as? [String: Int]
        #expect(held == ["during": 200, "after": 200], "\(crowd.lines)")
        #expect(slowloris.wait(timeout: 60) == 0, "\(slowloris.stderr)")
        let slow = try JSONSerialization.jsonObject(with: Data(slowloris.lines.joined().utf8)) as? [String: Any]
        // Cut off: 408 when its time ran out, or closed without a word when a scraper took its place.
        #expect(slow?["status"] as? Int == 408 || slow?["status"] is NSNull, "\(slowloris.lines)")
        #expect((slow?["seconds"] as? Double ?? 99) < 30, "the slowloris was held \(slow?["seconds"] ?? "?") s")

        // The daemon is unharmed: it scrapes, answers, and its counters saw the change.
        #expect(daemon.child.isRunning)
        metrics = try Self.scrape(from: uplink)
        #expect(metrics["reachd_reachable"] == "0")
        #expect(metrics[#"reachd_status{status="notReachable"}"#] == "1")
        #expect(metrics["reachd_primary_info"] == nil)
        #expect(metrics[#"reachd_events_total{reason="routeRemoved"}"#] == "1")
        #expect(try daemon.reachctl(["status"]).stdout.hasPrefix("offline"))
        try host.ip("route add default via \(link.gatewayAddress) dev eth0")
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains(#""code":"routeAdded""#) } })
        #expect((try? Self.scrape(from: uplink)["reachd_reachable"]) == "1")
    }

    @Test(.needsRoot(), .requires(.promtool)) func varlinkRejectionsAreCounted() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config())
        // Both are "not varlink" (`protocol_error`); each is counted on its own.
        let rejected = #"reachd_connections_rejected_total{reason="protocol_error"}"#
        func counted(_ value: String) -> Bool {
            waitUntil(timeout: 10) { ((try? Self.scrape(from: uplink)) ?? [:])[rejected] == value }
        }
        #expect(try Self.scrape(from: uplink)[rejected] == "0")
        // Malformed JSON.
        try sh("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\(daemon.socketPath)'); s.sendall(b'{nope\\\\0'); s.recv(10)\"", check: false)
        #expect(counted("1"), "\(daemon.child.stderr)")
        // A message over 64 KiB without its NUL.
        try sh("python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\(daemon.socketPath)'); s.sendall(b'x' * 70000); s.recv(10)\"", check: false)
        #expect(counted("2"), "\(daemon.child.stderr)")
        #expect(try daemon.reachctl(["status"]).status == 0)
    }

    @Test(.needsRoot()) func listenAddressThatCannotBeBoundStopsTheStart() throws {
        let ns = try TestNamespace(tag: "b")
        defer { ns.destroy() }
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        try Self.config(listen: "10.99.0.1:9464").write(toFile: directory + "/reachd.conf", atomically: true, encoding: .utf8)
        let result = try run(ipCommand, ["netns", "exec", ns.name, Binaries.reachd, "--config", directory + "/reachd.conf",
                                         "--socket", directory + "/io.reachd.Reachability"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("[Metrics] Listen=10.99.0.1:9464: bind: Cannot assign requested address"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/io.reachd.Reachability"))

        try "[Metrics]\nListen=localhost:9464\n".write(toFile: directory + "/bad.conf", atomically: true, encoding: .utf8)
        let check = try run(Binaries.reachd, ["--check-config", "--config", directory + "/bad.conf"])
        #expect(check.status == 1)
        #expect(check.stderr.contains("bad.conf:2: [Metrics] Listen=localhost:9464: bad IPv4 address 'localhost'"), "\(check.stderr)")
    }

    @Test(.needsRoot(), .requires(.promtool)) func textfileIsRewrittenAtomicallyOnEveryChangeAndPeriodically() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let link = try VethUplink(host: host, uplink: uplink)
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        let path = directory + "/reachd.prom"
        func read() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        // Without periodic rewrites (an hour): only changes rewrite the file.
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config(listen: nil, textfile: directory, interval: 3600))
        #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "1" })
        let lint = try promtoolCheckMetrics(read())
        #expect(lint.status == 0 && lint.output.isEmpty, "\(lint.output)")
        #expect(try sh("stat -c %a '\(path)'").output.trimmingCharacters(in: .whitespacesAndNewlines) == "644")
        // Over a stretch with a kernel message that changes nothing (the MTU) and one that does
        // (the carrier), the file is renamed into place no more often than events are counted in
        // it (a burst may be written once; a late event of the fresh link, its IPv6 link-local
        // address, rightly counts too).
        func eventCount(_ text: String) -> Int {
            metricSamples(text).filter { $0.key.hasPrefix("reachd_events_total") }.compactMap { Int($0.value) }.reduce(0, +)
        }
        let renames = try RenameWatch(directory)
        var before = 0
        repeat { before = eventCount(read()) } while renames.take() > 0
        try host.ip("link set eth0 mtu 1400")
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "0" })
        var rewrites = renames.take(), counted = 0
        while true {
            // Every rename counted was seen by the read after it: none came in between.
            counted = eventCount(read()) - before
            let more = renames.take()
            if more == 0 { break }
            rewrites += more
        }
        #expect(rewrites >= 1 && rewrites <= counted, "rewritten without a change: \(rewrites) renames, \(counted) events")
        try link.restoreCarrier()
        #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "1" })

        // A reader polling while the network flaps sees whole files only: each one ends with the
        // last family, and the file is never missing.
        let reader = DispatchQueue(label: "reader")
        let torn = NSLock()
        nonisolated(unsafe) var partial: [String] = []
        nonisolated(unsafe) var reads = 0
        nonisolated(unsafe) var stop = false
        let done = DispatchSemaphore(value: 0)
        reader.async {
            while !torn.withLock({ stop }) {
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<missing>"
                torn.withLock {
                    reads += 1
                    if !(text.hasPrefix("# HELP reachd_info ") && text.hasSuffix("\nreachd_netlink_overruns_total 0\n")) { partial.append(text) }
                }
            }
            done.signal()
        }
        for _ in 0..<10 {
            try link.dropCarrier()
            #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "0" })
            try link.restoreCarrier()
            #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "1" })
        }
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { metricSamples(read())["reachd_reachable"] == "0" })
        torn.withLock { stop = true }
        done.wait()
        torn.withLock {
            #expect(partial.isEmpty, "\(partial.count) torn reads of \(reads): \(partial.first ?? "")")
            #expect(reads > 10)
        }
        let events = Int(metricSamples(read())[#"reachd_events_total{reason="carrierLost"}"#] ?? "") ?? 0
        #expect(events >= 1)
        // Only reachd.prom is left: the temporary files were renamed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["reachd.prom"])
        daemon.stop()

        // With a 1 s interval the time counters move on in the file without any event.
        try? FileManager.default.removeItem(atPath: path)
        let periodic = try DaemonUnderTest(namespace: host, directory: directory, config: Self.config(listen: nil, textfile: directory, interval: 1))
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: path) })
        let first = Double(metricSamples(read())[#"reachd_status_seconds_total{status="notReachable"}"#] ?? "") ?? -1
        #expect(waitUntil(timeout: 10) {
            (Double(metricSamples(read())[#"reachd_status_seconds_total{status="notReachable"}"#] ?? "") ?? -1) > first
        })
        #expect(metricSamples(read())[#"reachd_status{status="notReachable"}"#] == "1")
        periodic.stop()
    }

    @Test(.needsRoot()) func unwritableTextfileDirectoryIsLoggedOnceAndNothingElseChanges() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let link = try VethUplink(host: host, uplink: uplink)
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config(listen: nil, textfile: directory + "/missing", interval: 1))
        let monitor = try Child(Binaries.reachctl, ["monitor", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        try link.dropCarrier()
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains("carrierLost") } })
        // A few periodic attempts (each failure after the first is logged at debug level).
        #expect(waitUntil(timeout: 15) {
            daemon.child.stderr.components(separatedBy: "metrics: writing \(directory)/missing/reachd.prom failed again").count > 3
        }, "\(daemon.child.stderr)")
        let warnings = daemon.child.stderr.split(separator: "\n").filter { $0.contains("cannot create a temporary file in \(directory)/missing") }
        #expect(warnings.count == 1, "\(daemon.child.stderr)")
        #expect(daemon.child.isRunning)
        // Once the directory exists, the file appears (and that is logged).
        try FileManager.default.createDirectory(atPath: directory + "/missing", withIntermediateDirectories: false)
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: directory + "/missing/reachd.prom") })
        #expect(metricSamples((try? String(contentsOfFile: directory + "/missing/reachd.prom", encoding: .utf8)) ?? "")["reachd_reachable"] == "0")
        // The line is written after the file it tells of.
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("metrics: writing \(directory)/missing/reachd.prom again") },
                "\(daemon.child.stderr)")
        #expect(try daemon.reachctl(["status"]).stdout == "offline")
    }
}
}

/// Files renamed into a directory (inotify's `IN_MOVED_TO`), as the kernel reports them.
private final class RenameWatch {
    private let descriptor: Int32

    init(_ directory: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw Errno.current("inotify_init1") }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_MOVED_TO)) >= 0 else {
            let error = Errno.current("inotify_add_watch", path: directory)
            close(descriptor)
            throw error
        }
    }

    /// The renames reported since the last call.
    func take() -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let length = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard length > 0 else { return count }
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
            var offset = 0
            while offset + 16 <= length {
                let nameLength = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) }
                count += 1
                offset += 16 + Int(nameLength)
            }
        }
    }

    deinit { close(descriptor) }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
