import Foundation
import Testing
import ReachabilityCore
@testable import ReachabilityHost
@testable import ReachabilityLinux
import TestSupport

extension TemporaryDirectory {
    /// Writes `text` to `name` under the directory, creating its parent directories.
    func write(_ name: String, _ text: String) throws {
        let full = path + "/" + name
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: false, encoding: .utf8)
    }
}

@Suite struct ConfigurationFilesTests {
    @Test func loadsMainFileAndDropInsFromDisk() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("reachd.conf", "[Events]\nHistory=1\n[Monitor]\nIgnoreInterfaces=a\n")
        try dir.write("reachd.conf.d/20-b.conf", "[Events]\nHistory=20\n")
        try dir.write("reachd.conf.d/10-a.conf", "[Events]\nHistory=10\n[Monitor]\nIgnoreInterfaces=b\n")
        try dir.write("reachd.conf.d/30-c.conf.disabled", "[Events]\nHistory=30\n")
        // A directory named like a drop-in, and a drop-in masked by a symlink to /dev/null.
        try FileManager.default.createDirectory(atPath: dir.path + "/reachd.conf.d/40-dir.conf", withIntermediateDirectories: true)
        try dir.write("reachd.conf.d/50-masked-target.txt", "[Events]\nHistory=50\n")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/reachd.conf.d/60-mask.conf", withDestinationPath: "/dev/null")

        let c = try ReachdConfiguration.load(mainFile: dir.path + "/reachd.conf")
        #expect(c.events.history == 20)
        #expect(c.monitor.ignoreInterfaces == ["a", "b"])
        #expect(try ReachdConfiguration.dropIns(for: dir.path + "/reachd.conf", in: FileSystemConfigurationFiles()).map {
            ($0 as NSString).lastPathComponent } == ["10-a.conf", "20-b.conf"])
    }

    @Test func missingFileAndDirectoryAreTheDefaults() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(try ReachdConfiguration.load(mainFile: dir.path + "/reachd.conf") == ReachdConfiguration())
        #expect(throws: ConfigurationError(file: dir.path + "/reachd.conf", message: "no such file")) {
            try ReachdConfiguration.load(mainFile: dir.path + "/reachd.conf", mustExist: true)
        }
    }

    @Test func syntaxErrorNamesTheRealFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("reachd.conf.d/a.conf", "[Socket]\nMode=999\n")
        #expect(throws: ConfigurationError(file: dir.path + "/reachd.conf.d/a.conf", line: 2, section: "Socket", key: "Mode",
                                           value: "999", message: "bad octal mode (expected e.g. 0666 or 0660)")) {
            try ReachdConfiguration.load(mainFile: dir.path + "/reachd.conf")
        }
    }

    @Test func directoryAsMainFileIsAnError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(throws: ConfigurationError(file: dir.path, message: "cannot read: is a directory")) {
            try ReachdConfiguration.load(mainFile: dir.path)
        }
    }

    @Test func unreadableFileIsAnErrorWithErrnoText() throws {
        // A symlink loop fails for root too (ELOOP), unlike a mode-000 file.
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/reachd.conf", withDestinationPath: dir.path + "/reachd.conf")
        #expect(throws: ConfigurationError(file: dir.path + "/reachd.conf", message: "cannot read: Too many levels of symbolic links")) {
            try ReachdConfiguration.load(mainFile: dir.path + "/reachd.conf")
        }
    }

    @Test func mapsToTheMonitorConfiguration() throws {
        let c = try ReachdConfiguration.parse("""
            [Monitor]
            IgnoreInterfaces=docker* veth*
            Debounce=300
            [Interfaces]
            Kind.usb*=wwan
            Kind.wl*=wifi
            Metered=usb0
            """, file: "x")
        let m = ReachabilityMonitor.Configuration(c)
        #expect(m.monitor.ignoreInterfaces == ["docker*", "veth*"])
        #expect(m.monitor.debounceMilliseconds == 300)
        #expect(m.interfaces.kinds.map(\.glob) == ["usb*", "wl*"])
        #expect(m.interfaces.kinds.map(\.kind) == [.wwan, .wifi])
        #expect(m.interfaces.metered == ["usb0"])
        #expect(m.sysfsRoot == "/sys" && m.firstSequence == 0)
    }
}
