import Glibc
import ReachabilitySystem
import Testing

/// `Inotify` on a real directory (the kernel queues an event during the call that causes it, so
/// each read right after sees it), and the decoding of records as `read(2)` hands them over.
@Suite struct InotifyTests {
    /// Everything queued now, over as many reads as it takes.
    private func drain(_ inotify: Inotify) throws -> [Inotify.Event] {
        var all: [Inotify.Event] = []
        while case let events = try inotify.readEvents(), !events.isEmpty { all += events }
        return all
    }

    @Test func createWriteCloseAndDeleteAreSeenWithTheFileName() throws {
        let directory = try scratchDirectory("inotify")
        defer { removeScratch(directory) }
        let inotify = try Inotify()
        let watch = try inotify.addWatch(path: directory, mask: [.create, .modify, .closeWrite, .delete])
        #expect(try inotify.readEvents() == [])

        let fd = open(directory + "/7", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        #expect(write(fd, "lease\n", 6) == 6)
        close(fd)
        try FileSystem.remove(directory + "/7")
        let events = try drain(inotify)
        #expect(events.map(\.mask) == [.create, .modify, .closeWrite, .delete])
        #expect(events.allSatisfy { $0.watch == watch && $0.name == "7" && $0.nameBytes == [0x37] })
        #expect(try inotify.readEvents() == [])
    }

    /// A rename is a `movedFrom` and a `movedTo` with one cookie; a directory carries `isDirectory`.
    @Test func aRenameIsTwoEventsWithOneCookie() throws {
        let directory = try scratchDirectory("inotify")
        defer { removeScratch(directory) }
        try FileSystem.writeAtomically(path: directory + "/.7.tmp", bytes: [1], mode: 0o644)
        let inotify = try Inotify()
        _ = try inotify.addWatch(path: directory, mask: [.movedFrom, .movedTo, .create])
        try FileSystem.rename(directory + "/.7.tmp", to: directory + "/7")
        try #require(mkdir(directory + "/sub", 0o755) == 0)
        defer { rmdir(directory + "/sub") }
        let events = try drain(inotify)
        try #require(events.count == 3, "\(events)")
        #expect(events[0].mask == .movedFrom && events[0].name == ".7.tmp")
        #expect(events[1].mask == .movedTo && events[1].name == "7")
        #expect(events[0].cookie != 0 && events[0].cookie == events[1].cookie)
        #expect(events[2].mask == [.create, .isDirectory] && events[2].name == "sub")
    }

    /// Removing a watch is reported as `ignored`, about the watch itself: no name.
    @Test func aRemovedWatchEndsWithIgnored() throws {
        let directory = try scratchDirectory("inotify")
        defer { removeScratch(directory) }
        let inotify = try Inotify()
        let watch = try inotify.addWatch(path: directory, mask: [.create])
        try inotify.removeWatch(watch)
        #expect(try drain(inotify) == [Inotify.Event(watch: watch, mask: .ignored, nameBytes: nil)])
        #expect(throws: Errno.invalidArgument) { try inotify.removeWatch(watch) }
    }

    /// A buffer too small for one event is made large enough, not an `EINVAL` from the kernel.
    @Test func aTinyBufferStillReadsAnEventWithALongName() throws {
        let directory = try scratchDirectory("inotify")
        defer { removeScratch(directory) }
        let inotify = try Inotify()
        _ = try inotify.addWatch(path: directory, mask: [.create])
        let name = String(repeating: "n", count: 255)
        let fd = open(directory + "/" + name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        close(fd)
        let events = try inotify.readEvents(bufferSize: 1)
        #expect(events.first?.name == name)
    }

    @Test func aMissingDirectoryNamesTheCallAndThePath() throws {
        let inotify = try Inotify()
        #expect {
            try inotify.addWatch(path: "/nonexistent/reachd-leases", mask: [.closeWrite])
        } throws: { error in
            guard let error = error as? Errno else { return false }
            return error == .noSuchFile && error.description == "inotify_add_watch /nonexistent/reachd-leases: No such file or directory"
        }
    }

    /// Records laid out as the kernel does (name padded with NULs), then one whose `len` runs past
    /// the end: its bytes that are there are the name, and nothing is read beyond them.
    @Test func decodingIsByOffsetAndBoundsChecked() {
        func record(wd: Int32, mask: UInt32, cookie: UInt32, len: UInt32, name: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: wd.littleEndian) { Array($0) } + withUnsafeBytes(of: mask.littleEndian) { Array($0) }
                + withUnsafeBytes(of: cookie.littleEndian) { Array($0) } + withUnsafeBytes(of: len.littleEndian) { Array($0) } + name
        }
        let closeWrite = Inotify.Mask.closeWrite.rawValue, ignored = Inotify.Mask.ignored.rawValue
        // One byte in front, so that no record is aligned.
        let bytes: [UInt8] = [0xAA]
            + record(wd: 1, mask: closeWrite, cookie: 0, len: 4, name: [0x37, 0, 0, 0])
            + record(wd: 1, mask: ignored, cookie: 0, len: 0, name: [])
            + record(wd: 2, mask: closeWrite, cookie: 9, len: 1000, name: [0x31, 0x32])
        let events = bytes.withUnsafeBytes { Inotify.decode(UnsafeRawBufferPointer(rebasing: $0[1...])) }
        #expect(events == [
            Inotify.Event(watch: Inotify.Watch(rawValue: 1), mask: .closeWrite, nameBytes: [0x37]),
            Inotify.Event(watch: Inotify.Watch(rawValue: 1), mask: .ignored, nameBytes: nil),
            Inotify.Event(watch: Inotify.Watch(rawValue: 2), mask: .closeWrite, cookie: 9, nameBytes: [0x31, 0x32]),
        ])
        // Less than a header: nothing.
        #expect([UInt8](repeating: 1, count: 15).withUnsafeBytes { Inotify.decode($0) } == [])
    }
}
