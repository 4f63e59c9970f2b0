import Glibc
import ReachabilitySystem
import Testing

/// `FileSystem.readRegularFile` on what a hostile or broken directory holds: every case ends at
/// once with the bytes or a reason, never a wait and never more than the limit in memory.
@Suite struct ReadRegularFileTests {
    private func failure(_ body: () throws(FileSystem.ReadFailure) -> FileSystem.FilePrefix) -> FileSystem.ReadFailure? {
        do throws(FileSystem.ReadFailure) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// Exactly `limit` bytes is the whole file; one more and the file is cut at the limit.
    @Test func aFileUpToTheLimitIsWholeAndALargerOneIsCut() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        let path = directory + "/lease"
        try FileSystem.writeAtomically(path: path, bytes: Array("0123456789".utf8), mode: 0o644)
        #expect(try FileSystem.readRegularFile(path, limit: 10) == .init(bytes: Array("0123456789".utf8), isTruncated: false))
        #expect(try FileSystem.readRegularFile(path, limit: 64) == .init(bytes: Array("0123456789".utf8), isTruncated: false))
        #expect(try FileSystem.readRegularFile(path, limit: 9) == .init(bytes: Array("012345678".utf8), isTruncated: true))
        #expect(try FileSystem.readRegularFile(path, limit: 0) == .init(bytes: [], isTruncated: true))
    }

    /// 4 MiB read with a 1 KiB limit: the first KiB, marked cut.
    @Test func aHugeFileCostsTheLimit() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        let path = directory + "/huge"
        try FileSystem.writeAtomically(path: path, bytes: [UInt8](repeating: 0x41, count: 4 << 20), mode: 0o644)
        let read = try FileSystem.readRegularFile(path, limit: 1024)
        #expect(read.bytes == [UInt8](repeating: 0x41, count: 1024))
        #expect(read.isTruncated)
    }

    /// A FIFO with no writer would block a plain open forever; here it is refused at once.
    @Test func aFIFOIsNotARegularFile() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        let path = directory + "/fifo"
        try #require(mkfifo(path, 0o644) == 0)
        #expect(failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(path, limit: 100) }
            == .notRegularFile(path: path, kind: .other))
        #expect(FileSystem.ReadFailure.notRegularFile(path: path, kind: .other).description == "\(path): not a regular file")
    }

    /// A link to /dev/zero: refused by `O_NOFOLLOW` (`ELOOP`, naming the call and the path);
    /// followed, the device is still no regular file.
    @Test func aSymbolicLinkToADeviceIsRefusedEitherWay() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        let path = directory + "/zero"
        try #require(symlink("/dev/zero", path) == 0)
        let refused = failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(path, limit: 100) }
        guard case .system(let error) = refused else { Issue.record("\(String(describing: refused))"); return }
        #expect(error.rawValue == ELOOP)
        #expect(error.call == "open" && error.path == path)
        #expect(refused?.description == "open \(path): \(error.text)")
        #expect(failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(path, limit: 100, followingLinks: true) }
            == .notRegularFile(path: path, kind: .other))
    }

    @Test func aDirectoryAndAMissingFile() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        try #require(mkdir(directory + "/sub", 0o755) == 0)
        #expect(failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(directory + "/sub", limit: 100) }
            == .notRegularFile(path: directory + "/sub", kind: .directory))
        let missing = failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(directory + "/none", limit: 100) }
        #expect(missing == .system(.noSuchFile))
        #expect(missing?.description == "open \(directory)/none: No such file or directory")
    }

    /// A name that is not UTF-8 is opened by its own bytes, not a replacement character's.
    @Test func aPathOfBytesThatAreNotUTF8() throws {
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        let bytes = Array((directory + "/eth").utf8) + [0xFF, 0xFE]
        let fd = open(bytes.map { CChar(bitPattern: $0) } + [0], O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        #expect(write(fd, "DEVTYPE=wlan\n", 13) == 13)
        close(fd)
        #expect(try FileSystem.readRegularFile(pathBytes: bytes, limit: 100).bytes == Array("DEVTYPE=wlan\n".utf8))
        let replaced = directory + "/eth\u{FFFD}\u{FFFD}"
        #expect(failure { () throws(FileSystem.ReadFailure) in try FileSystem.readRegularFile(replaced, limit: 100) } == .system(.noSuchFile))
    }

    /// `read(upTo:)` on a file that never ends stops at the limit; a FIFO opened non-blocking
    /// without a writer does not wait.
    @Test func readUpToAndNonBlockingOpen() throws {
        let zero = try FileDescriptor.open("/dev/zero")
        #expect(try zero.read(upTo: 100_000) == [UInt8](repeating: 0, count: 100_000))
        let directory = try scratchDirectory("read")
        defer { removeScratch(directory) }
        try #require(mkfifo(directory + "/fifo", 0o644) == 0)
        let fifo = try FileDescriptor.open(directory + "/fifo", options: [.nonBlocking, .noFollow])
        #expect(try fifo.status().kind == .other)
        // No writer has ever opened it: end of file, at once.
        #expect(try fifo.read(upTo: 10) == [])
    }
}
