import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What an unfriendly local user can try against reachd, and what must hold: out-of-range
/// numbers in the configuration are refused when read, and never trap later.
@Suite(.serialized) struct HostileConfigurationTests {
    /// `--check-config` names file, line and key and exits 1 for every out-of-range number.
    @Test(arguments: [
        ("[Monitor]\nDebounce=99999999999999999999\n", "reachd.conf:2: [Monitor] Debounce=99999999999999999999: time span out of range"),
        ("[Connectivity]\nInterval=99999999999999999999\n", "reachd.conf:2: [Connectivity] Interval=99999999999999999999: time span out of range"),
        ("[Connectivity]\nTimeout=1e400\n", "reachd.conf:2: [Connectivity] Timeout=1e400: bad time span"),
        ("[Events]\nHistory=99999999999999999999\n", "reachd.conf:2: [Events] History=99999999999999999999: bad number"),
        ("\n[Limits]\nMaxQueuedBytes=99999999999999999999G\n", "reachd.conf:3: [Limits] MaxQueuedBytes=99999999999999999999G: bad size"),
        ("[Limits]\nMaxChecksInFlight=0\n", "reachd.conf:2: [Limits] MaxChecksInFlight=0: bad number"),
    ])
    func checkConfigRefusesOutOfRangeNumbers(_ config: String, _ message: String) throws {
        let directory = try temporaryDirectory()
        defer { _ = try? sh("rm -rf '\(directory)'", check: false) }
        try config.write(toFile: directory + "/reachd.conf", atomically: true, encoding: .utf8)
        let result = try run(Binaries.reachd, ["--check-config", "--config", directory + "/reachd.conf"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(directory + "/" + message), "\(result.stderr)")
    }

    /// A running daemon given an out-of-range number by SIGHUP keeps its configuration and keeps
    /// answering; the one it started with (a short Interval) still works.
    @Test(.enabled(if: getuid() == 0, "needs root: network namespaces"))
    func reloadWithOutOfRangeNumberKeepsRunning() throws {
        let host = try TestNamespace(tag: "h")
        defer { host.destroy() }
        let daemon = try DaemonUnderTest(namespace: host, config: "[Connectivity]\nEnabled=no\n[Monitor]\nDebounce=10\n")
        try "[Connectivity]\nEnabled=no\nInterval=99999999999999999999\n[Monitor]\nDebounce=99999999999999999999\n"
            .write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("keeping the running configuration") }, "\(daemon.child.stderr)")
        #expect(daemon.child.isRunning)
        #expect(try daemon.reachctl(["status"]).status == 0)
    }
}
