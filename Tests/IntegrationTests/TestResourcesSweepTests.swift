import Foundation
import ReachabilitySystem
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Which names are a test process's (`rch<pid>-…`), and whose.
@Suite struct TestResourceNameTests {
    @Test(arguments: [
        ("rch123-4h", 123 as pid_t?), ("rch4194303-1", 4_194_303), ("rch77-bus-x1Yz", 77),
        ("rchext999", nil), ("rch-sockdiag-1", nil), ("rch12", nil), ("xrch1-2", nil), ("rch1234567890-1", nil),
        ("reachd-ca-1", nil), ("", nil),
    ])
    func owner(_ name: String, _ pid: pid_t?) {
        #expect(TestResources.owner(of: name) == pid)
    }

    @Test func thisProcessesPrefix() {
        #expect(TestResources.prefix == "rch\(getpid())-")
        #expect(TestResources.owner(of: TestResources.prefix + "7h") == getpid())
    }
}

extension SystemTests {
/// The sweep a test process runs before its first namespace: what a dead test process left
/// (its namespace with a daemon in it, its resolver directory under /etc/netns, its temporary
/// directory and a daemon naming it) goes; a live process's, and names of any other form, stay.
@Suite struct TestResourcesSweepTests {
    @Test(.needsRoot("creates namespaces and kills the processes in them"))
    func sweepsWhatADeadTestProcessLeft() throws {
        // First: this process's first namespace runs the sweep once (`sweepOnce`).
        let live = try TestNamespace(tag: "sweep")
        defer { live.destroy() }
        let dead = try #require(Self.unusedPid(), "no free pid to play a dead test process")
        let deadNamespace = "rch\(dead)-1sweep"
        let notOurs = "rchsweep\(getpid())"
        try sh("ip netns add \(deadNamespace)")
        try sh("ip netns add \(notOurs)")
        defer {
            _ = try? sh("ip netns delete \(deadNamespace); ip netns delete \(notOurs); rm -rf /etc/netns/\(deadNamespace)", check: false)
        }

        // What the dead one left: a daemon in its namespace, its resolver, a temporary
        // directory and a daemon outside any namespace that names a file in it.
        let deadDirectory = "/tmp/rch\(dead)-sweep"
        try FileManager.default.createDirectory(atPath: deadDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: deadDirectory) }
        try FileManager.default.createDirectory(atPath: "/etc/netns/\(deadNamespace)", withIntermediateDirectories: true)
        let inDeadNamespace = try Child(ipCommand, ["netns", "exec", deadNamespace, "/bin/sleep", "600"])
        let namingDeadFile = try Self.sleeper(naming: deadDirectory + "/bus")
        // And the live one's.
        let liveDirectory = try TemporaryDirectory()
        let inLiveNamespace = try Child(ipCommand, ["netns", "exec", live.name, "/bin/sleep", "600"])
        let namingLiveFile = try Self.sleeper(naming: liveDirectory.path + "/bus")
        let inNotOurs = try Child(ipCommand, ["netns", "exec", notOurs, "/bin/sleep", "600"])
        #expect(waitUntil(timeout: 10) { Self.pids(in: deadNamespace).contains(inDeadNamespace.pid) })

        let swept = TestResources.sweep()

        #expect(swept.namespaces.contains(deadNamespace), "\(swept)")
        #expect(!FileManager.default.fileExists(atPath: "/run/netns/\(deadNamespace)"))
        #expect(inDeadNamespace.wait(timeout: 10) == SIGKILL)
        #expect(namingDeadFile.wait(timeout: 10) == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: deadDirectory))
        #expect(!FileManager.default.fileExists(atPath: "/etc/netns/\(deadNamespace)"))

        #expect(!swept.namespaces.contains(live.name) && !swept.namespaces.contains(notOurs))
        #expect(FileManager.default.fileExists(atPath: "/run/netns/\(live.name)"))
        #expect(FileManager.default.fileExists(atPath: "/run/netns/\(notOurs)"))
        #expect(FileManager.default.fileExists(atPath: liveDirectory.path))
        #expect(inLiveNamespace.isRunning && namingLiveFile.isRunning && inNotOurs.isRunning)
        #expect(Set(swept.processes).isDisjoint(with: [inLiveNamespace.pid, namingLiveFile.pid, inNotOurs.pid]))
    }

    /// A python that sleeps with `path` among its arguments, as a server started with a file
    /// of a temporary directory does.
    static func sleeper(naming path: String) throws -> Child {
        try Child("/usr/bin/python3", ["-c", "import time; time.sleep(600)", path])
    }

    /// The processes in a namespace (`ip netns pids`).
    static func pids(in namespace: String) -> [pid_t] {
        ((try? sh("ip netns pids \(namespace)", check: false).output) ?? "").split(separator: "\n").compactMap { pid_t($0) }
    }

    /// A pid no process has (`kill(pid, 0)` fails with ESRCH), from the top of the range, where
    /// the kernel comes last.
    static func unusedPid() -> pid_t? {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8)) ?? "32768"
        let maximum = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 32768
        return stride(from: maximum - 1, to: maximum - 1000, by: -1).first { kill($0, 0) == -1 && errno == ESRCH }
    }
}
}
