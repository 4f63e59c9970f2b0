import Glibc
import ReachabilitySystem
import Testing

@Suite struct FileDescriptorTests {
    /// True when `fd` is open in this process (`fcntl(F_GETFD)`).
    private func isOpen(_ fd: CInt) -> Bool { fcntl(fd, F_GETFD) != -1 }

    /// One message to many sockets: each gets all of it, a full one `-EAGAIN`, one whose peer
    /// is gone `-EPIPE` (no SIGPIPE), and a negative entry is skipped, its result untouched.
    @Test func sendToEachReportsEverySocketOnItsOwn() throws {
        var pairs: [[CInt]] = []
        for _ in 0..<3 {
            var ends: [CInt] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
            pairs.append(ends)
        }
        defer { for ends in pairs { for end in ends where end >= 0 { close(end) } } }
        // The second socket is full: fill it without waiting until it takes no more.
        let filler = [UInt8](repeating: 1, count: 65536)
        while filler.withUnsafeBytes({ Glibc.send(pairs[1][0], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        // The third one's peer is gone.
        close(pairs[2][1])
        pairs[2][1] = -1
        let message = Array("event\0".utf8)
        let descriptors: [CInt] = [pairs[0][0], pairs[1][0], pairs[2][0], -1]
        var sent = [Int](repeating: 42, count: 4)
        message.withUnsafeBytes { bytes in
            descriptors.withUnsafeBufferPointer { descriptors in
                sent.withUnsafeMutableBufferPointer { FileDescriptor.send(bytes, toEach: descriptors, sent: $0) }
            }
        }
        #expect(sent == [message.count, -Int(EAGAIN), -Int(EPIPE), 42])
        var received = [UInt8](repeating: 0, count: 64)
        let count = recv(pairs[0][1], &received, received.count, Int32(MSG_DONTWAIT))
        #expect(Array(received[0..<max(count, 0)]) == message)
    }

    @Test func closeClosesOnceAndReportsErrors() throws {
        let pipe = try FileDescriptor.Pipe()
        let readEnd = pipe.readEnd.rawValue
        let writeEnd = pipe.writeEnd.rawValue
        #expect(isOpen(readEnd) && isOpen(writeEnd))
        // Non-copyable: closing consumes the value, so it cannot be closed or used again.
        let descriptor = FileDescriptor(adopting: dup(writeEnd))
        let number = descriptor.rawValue
        try descriptor.close()
        #expect(!isOpen(number))
        // A number not open is an error of close(2), named so.
        #expect(throws: Errno(rawValue: EBADF)) { try FileDescriptor(adopting: number).close() }
        _ = consume pipe
        #expect(!isOpen(readEnd) && !isOpen(writeEnd))
    }

    @Test func aDescriptorNotClosedIsClosedWhenItEnds() throws {
        var number: CInt = -1
        do {
            let descriptor = try FileDescriptor.open("/dev/null")
            number = descriptor.rawValue
            #expect(isOpen(number))
        }
        #expect(!isOpen(number))
    }

    @Test func releaseHandsTheNumberOnWithoutClosing() throws {
        let descriptor = try FileDescriptor.open("/dev/null")
        let number = descriptor.release()
        #expect(isOpen(number))
        Glibc.close(number)
    }

    @Test func anOptionalDescriptorTakenIsClosedOnce() throws {
        var held: FileDescriptor? = try FileDescriptor.open("/dev/null")
        let number = held?.rawValue ?? -1
        if let descriptor = held.take() { try descriptor.close() }
        #expect(held?.rawValue == nil)
        #expect(!isOpen(number))
    }

    @Test func opensAreCloseOnExec() throws {
        let descriptor = try FileDescriptor.open("/dev/null")
        #expect(fcntl(descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func writeAllThenReadBackThroughAPipe() throws {
        let pipe = try FileDescriptor.Pipe()
        try pipe.writeEnd.writeAll("hello, pipe")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { (raw) throws(Errno) in try pipe.readEnd.read(into: raw) }
        #expect(String(decoding: buffer[0..<count], as: UTF8.self) == "hello, pipe")
    }

    /// The wait of a thread that sleeps on a descriptor it does not own (the netlink reader):
    /// nothing yet, readable, cancelled (which wins over readable), and a descriptor closed
    /// under it, which ends the wait with EBADF instead of reporting it ready for ever.
    @Test func pollOnADescriptorNumber() throws {
        let watched = try FileDescriptor.Pipe()
        let cancel = try FileDescriptor.Pipe()
        let fd = watched.readEnd.rawValue
        #expect(try FileDescriptor.poll(fd, for: .readable, cancelledBy: cancel.readEnd.rawValue, timeoutMilliseconds: 0) == .pending)
        try watched.writeEnd.writeAll("x")
        #expect(try FileDescriptor.poll(fd, for: .readable, cancelledBy: cancel.readEnd.rawValue, timeoutMilliseconds: 0) == .ready)
        #expect(try FileDescriptor.poll(fd, for: .readable, timeoutMilliseconds: -1) == .ready)
        try cancel.writeEnd.writeAll("x")
        #expect(try FileDescriptor.poll(fd, for: .readable, cancelledBy: cancel.readEnd.rawValue, timeoutMilliseconds: 0) == .cancelled)
        let closed = try FileDescriptor.open("/dev/null")
        let number = closed.rawValue
        try closed.close()
        do {
            _ = try FileDescriptor.poll(number, for: .readable, timeoutMilliseconds: -1)
            Issue.record("a closed descriptor polled without an error")
        } catch {
            #expect(error == .badFileDescriptor)
            #expect(error.description == "poll: Bad file descriptor")
        }
    }

    /// A descriptor lent by someone else (logind's inhibitor in a D-Bus message) is kept as a
    /// close-on-exec duplicate of our own, at 3 or above, that outlives the original.
    @Test func duplicateKeepsALentDescriptor() throws {
        let pipe = try FileDescriptor.Pipe()
        let lent = dup(pipe.writeEnd.rawValue)
        try #require(lent >= 0)
        let kept = try FileDescriptor.duplicate(lent)
        #expect(kept.rawValue >= 3 && kept.rawValue != lent)
        #expect(fcntl(kept.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        close(lent)
        try kept.writeAll("still open")
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = try buffer.withUnsafeMutableBytes { (raw) throws(Errno) in try pipe.readEnd.read(into: raw) }
        #expect(String(decoding: buffer[0..<count], as: UTF8.self) == "still open")
        #expect(throws: Errno.badFileDescriptor) { _ = try FileDescriptor.duplicate(lent) }
    }

    @Test func readToEndReadsPastOneBufferUntilEndOfFile() throws {
        // More than one 16 KiB read, and not a multiple of it, so the last read is short.
        let text = String(repeating: "reachd.conf line\n", count: 3000)
        var path = ""
        let file = try FileDescriptor.createTemporary(template: "/tmp/reachd-read-XXXXXX", path: &path)
        defer { unlink(path) }
        try file.writeAll(text)
        try file.close()
        let bytes = try FileDescriptor.open(path).readToEnd()
        #expect(bytes.count == text.utf8.count)
        #expect(String(decoding: bytes, as: UTF8.self) == text)
        #expect(try FileDescriptor.open("/dev/null").readToEnd().isEmpty)
    }

    @Test func readToEndOfAWriteOnlyDescriptorNamesTheCall() throws {
        let descriptor = try FileDescriptor.open("/dev/null", .writeOnly)
        #expect(throws: Errno.badFileDescriptor) { try descriptor.readToEnd() }
        do {
            _ = try descriptor.readToEnd()
        } catch {
            #expect(error.call == "read")
        }
    }

    @Test func openingAMissingFileNamesCallAndPath() {
        do {
            _ = try FileDescriptor.open("/nonexistent/reachd-test")
            Issue.record("opened a missing file")
        } catch {
            #expect(error == .noSuchFile)
            #expect(error.description == "open /nonexistent/reachd-test: No such file or directory")
        }
    }
}
