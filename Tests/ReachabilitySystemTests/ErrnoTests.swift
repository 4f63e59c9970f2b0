import Glibc
import ReachabilitySystem
import Testing

@Suite struct ErrnoTests {
    @Test func descriptionIsCallThenTheCLibraryText() {
        #expect(Errno(ENOENT, call: "open").description == "open: No such file or directory")
        #expect(Errno(ECONNREFUSED, call: "connect", path: "/run/x.sock").description == "connect /run/x.sock: Connection refused")
        #expect(Errno(EACCES, call: "bind").text == "Permission denied")
        #expect(Errno(rawValue: EPIPE).description == "Broken pipe")
    }

    @Test func equalityAndMatchingGoByTheNumberAlone() {
        let error: any Error = Errno(EAGAIN, call: "recv")
        #expect(Errno(EAGAIN, call: "recv") == .wouldBlock)
        #expect(Errno(EAGAIN, call: "recv") != .interrupted)
        var matched = false
        if case Errno.wouldBlock = error { matched = true }
        #expect(matched)
        #expect(Set([Errno(ENOENT, call: "a"), Errno(ENOENT, call: "b")]).count == 1)
    }

    @Test func currentReadsTheThreadsErrno() {
        #expect(Glibc.close(-1) == -1)
        let error = Errno.current("close")
        #expect(error == Errno(rawValue: EBADF))
        #expect(error.call == "close")
    }

    @Test func retryingOnInterruptThrowsOtherErrorsWithTheCallsName() {
        var calls = 0
        #expect(throws: Errno(rawValue: EBADF)) {
            try retryingOnInterrupt("read") { () -> Int in calls += 1; return Glibc.read(-1, nil, 0) }
        }
        #expect(calls == 1)
        do {
            _ = try retryingOnInterrupt("read", path: "/x") { Glibc.read(-1, nil, 0) }
        } catch {
            #expect(error.description == "read /x: Bad file descriptor")
        }
    }

    @Test func retryingOnInterruptRetriesEINTR() throws {
        var calls = 0
        let result = try retryingOnInterrupt("fake") { () -> CInt in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }
}
