import Foundation
import ReachabilityCore
@testable import ReachabilityLinux
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// sysfs as a fake tree: what a `uevent` says, and what a planted FIFO or link does not (no
/// wait, no evidence).
struct SysfsInterfaceFactsTests {
    @Test func devtypeComesFromARegularUeventOnly() throws {
        let sysfs = try FakeSysfs()
        let facts = SysfsInterfaceFacts(root: sysfs.root)
        try sysfs.mark("wlan0", devtype: "wlan")
        #expect(facts.devtype(Array("wlan0".utf8)) == "wlan")
        #expect(facts.devtype(Array("eth9".utf8)) == nil)

        let fifo = "\(sysfs.root)/class/net/fifo0"
        try FileManager.default.createDirectory(atPath: fifo, withIntermediateDirectories: true)
        #expect(mkfifo(fifo + "/uevent", 0o644) == 0)
        #expect(facts.devtype(Array("fifo0".utf8)) == nil)

        let linked = "\(sysfs.root)/class/net/link0"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        #expect(symlink("\(sysfs.root)/class/net/wlan0/uevent", linked + "/uevent") == 0)
        #expect(facts.devtype(Array("link0".utf8)) == nil)
    }

    /// A name that is not UTF-8 is looked up under its own bytes.
    @Test func aNameThatIsNotUTF8IsReadByItsBytes() throws {
        let sysfs = try FakeSysfs()
        let name: [UInt8] = Array("wl".utf8) + [0xFF]
        let directory = Array("\(sysfs.root)/class/net/".utf8) + name
        #expect(mkdir(directory.map { CChar(bitPattern: $0) } + [0], 0o755) == 0)
        // FileManager may not remove a name that is not UTF-8: done here, by the bytes.
        defer {
            unlink((directory + Array("/uevent".utf8)).map { CChar(bitPattern: $0) } + [0])
            rmdir(directory.map { CChar(bitPattern: $0) } + [0])
        }
        let fd = open((directory + Array("/uevent".utf8)).map { CChar(bitPattern: $0) } + [0], O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        #expect(write(fd, "DEVTYPE=wlan\n", 13) == 13)
        close(fd)
        #expect(SysfsInterfaceFacts(root: sysfs.root).devtype(name) == "wlan")
    }
}
