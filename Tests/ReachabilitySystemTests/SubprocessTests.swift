import Dispatch
import ReachabilitySystem
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct SubprocessTests {
    static let shell = "/bin/sh"

    /// Exit statuses as the program returned them.
    @Test(arguments: [0, 1, 7, 255])
    func exitStatus(_ status: Int32) throws {
        let child = try Subprocess(Self.shell, arguments: ["-c", "exit \(status)"], environment: [])
        #expect(child.wait(timeout: 30) == .exited(status))
        #expect(!child.isRunning)
        #expect(child.termination == .exited(status))
    }

    /// A signal ends it; it is sent to the process, or to the group it leads, which takes what
    /// it started too.
    @Test func signals() throws {
        let sleeper = try Subprocess("/bin/sleep", arguments: ["30"], environment: [])
        #expect(sleeper.isRunning)
        try sleeper.signal(SIGTERM)
        #expect(sleeper.wait(timeout: 30) == .signaled(SIGTERM))
        // Reaped: its pid may be anyone's now, so nothing is sent.
        #expect(throws: Errno(rawValue: ESRCH)) { try sleeper.signal(SIGTERM) }

        let parent = try Subprocess(Self.shell, arguments: ["-c", "sleep 30 & echo $!; wait"], environment: [],
                                    newProcessGroup: true)
        #expect(waitFor { parent.lines(.output).count == 1 })
        let grandchild = try #require(parent.lines(.output).first.flatMap { pid_t($0) })
        #expect(kill(grandchild, 0) == 0)
        try parent.signal(SIGKILL, toGroup: true)
        #expect(parent.wait(timeout: 30) == .signaled(SIGKILL))
        // The shell is gone and cannot reap it: init does, soon.
        #expect(waitFor { kill(grandchild, 0) == -1 && errno == ESRCH })
    }

    /// A child started from a thread that blocks SIGTERM and SIGINT (a thread of Dispatch's
    /// pool does) does not inherit the mask: both end it.
    @Test func aChildGetsNoBlockedOrIgnoredSignals() throws {
        let children = Mutex<[Subprocess]>([])
        let started = DispatchSemaphore(value: 0)
        let failure = Mutex<Errno?>(nil)
        try DetachedThread.start {
            var blocked = sigset_t(), previous = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGINT)
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil); started.signal() }
            do throws(Errno) {
                let first = try Subprocess("/bin/sleep", arguments: ["30"], environment: [])
                let second = try Subprocess("/bin/sleep", arguments: ["30"], environment: [])
                children.withLock { $0 = [first, second] }
            } catch {
                failure.withLock { $0 = error }
            }
        }
        started.wait()
        #expect(failure.withLock { $0 } == nil)
        let both = children.withLock { $0 }
        try #require(both.count == 2)
        try both[0].signal(SIGTERM)
        #expect(both[0].wait(timeout: 30) == .signaled(SIGTERM))
        try both[1].signal(SIGINT)
        #expect(both[1].wait(timeout: 30) == .signaled(SIGINT))
    }

    /// Lines of both streams, apart, each handed over once; the last one without its newline.
    @Test func linesOfBothStreams() throws {
        let seen = Mutex<[String]>([])
        let child = try Subprocess(Self.shell, arguments: ["-c", "printf 'one\\ntwo\\n\\npartial'; printf 'e1\\ne2' >&2"],
                                   environment: []) { stream, line in
            seen.withLock { $0.append("\(stream == .output ? "out" : "err") \(line)") }
        }
        #expect(child.wait(timeout: 30) == .exited(0))
        #expect(child.lines(.output) == ["one", "two", "", "partial"])
        #expect(child.lines(.error) == ["e1", "e2"])
        #expect(child.text(.output) == "one\ntwo\n\npartial")
        #expect(seen.withLock { $0 }.filter { $0.hasPrefix("out") } == ["out one", "out two", "out ", "out partial"])
        #expect(seen.withLock { $0 }.filter { $0.hasPrefix("err") } == ["err e1", "err e2"])

        let complete = try Subprocess(Self.shell, arguments: ["-c", "echo a; echo b"], environment: [])
        _ = complete.wait(timeout: 30)
        #expect(complete.text(.output) == "a\nb\n")
    }

    /// A long line comes whole (no limit, unlike `ChildProcess`), and more than a pipe holds
    /// does not stall the program.
    @Test func longOutput() throws {
        let child = try Subprocess(Self.shell, arguments: ["-c", "head -c 100000 /dev/zero | tr '\\0' x; echo; seq 1 20000"],
                                   environment: [])
        #expect(child.wait(timeout: 60) == .exited(0))
        let lines = child.lines(.output)
        #expect(lines.first?.count == 100_000)
        #expect(lines.count == 20_001)
        #expect(lines.last == "20000")
    }

    /// stderr into stdout: one stream, in the order written.
    @Test func errorIntoOutput() throws {
        let child = try Subprocess(Self.shell, arguments: ["-c", "echo a; echo b >&2; echo c"], environment: [], error: .intoOutput)
        #expect(child.wait(timeout: 30) == .exited(0))
        #expect(child.lines(.output) == ["a", "b", "c"])
        #expect(child.lines(.error).isEmpty)
    }

    /// Discarded output goes to /dev/null: the program writes without error.
    @Test func discardedOutput() throws {
        let child = try Subprocess(Self.shell, arguments: ["-c", "echo a && echo b >&2 && test -c /proc/self/fd/1 && test -c /proc/self/fd/2"],
                                   environment: [], output: .discard, error: .discard)
        #expect(child.wait(timeout: 30) == .exited(0))
        #expect(child.lines(.output).isEmpty)
    }

    /// Exactly the environment given.
    @Test func environment() throws {
        let child = try Subprocess("/usr/bin/env", environment: ["ONLY=yes", "ALSO=a b"])
        #expect(child.wait(timeout: 30) == .exited(0))
        #expect(child.lines(.output).sorted() == ["ALSO=a b", "ONLY=yes"])
    }

    /// The working directory given, and a clear error for one that is not there.
    @Test func workingDirectory() throws {
        let child = try Subprocess("/bin/pwd", environment: [], directory: "/usr/share")
        #expect(child.wait(timeout: 30) == .exited(0))
        #expect(child.lines(.output) == ["/usr/share"])

        let error = #expect(throws: Errno.self) {
            try Subprocess("/bin/pwd", environment: [], directory: "/nonexistent/reachd-test")
        }
        #expect(error == .noSuchFile)
        #expect(error?.description == "chdir /nonexistent/reachd-test: No such file or directory")
    }

    /// A program that is not there: posix_spawn's ENOENT, naming the path.
    @Test func aMissingProgram() throws {
        let error = #expect(throws: Errno.self) {
            try Subprocess("/nonexistent/program", environment: [])
        }
        #expect(error == .noSuchFile)
        #expect(error?.description == "posix_spawn /nonexistent/program: No such file or directory")
        let notExecutable = #expect(throws: Errno.self) { try Subprocess("/etc/passwd", environment: []) }
        #expect(notExecutable == .permissionDenied)
    }

    /// stdin from /dev/null ends at once; from a pipe it carries what is written until closed.
    @Test func input() throws {
        let empty = try Subprocess("/bin/cat", environment: [])
        #expect(empty.wait(timeout: 30) == .exited(0))
        #expect(empty.lines(.output).isEmpty)

        let cat = try Subprocess("/bin/cat", environment: [], input: .pipe)
        try cat.writeInput(Array("hello\nwor".utf8))
        try cat.writeInput(Array("ld\n".utf8))
        #expect(cat.wait(timeout: 0.2) == .timedOut)
        cat.closeInput()
        #expect(cat.wait(timeout: 30) == .exited(0))
        #expect(cat.lines(.output) == ["hello", "world"])
        #expect(throws: Errno.badFileDescriptor) { try cat.writeInput([1]) }
    }

    /// A deadline that passes leaves it running; killAndWait ends it.
    @Test func deadline() throws {
        let child = try Subprocess("/bin/sleep", arguments: ["30"], environment: [])
        #expect(child.wait(timeout: 0.1) == .timedOut)
        #expect(child.isRunning)
        #expect(child.killAndWait() == .signaled(SIGKILL))
        #expect(child.killAndWait() == .signaled(SIGKILL))
        #expect(!child.isRunning)
    }

    /// A handle that goes away kills and reaps its process: no zombie, no orphan.
    @Test func aDroppedHandleLeavesNoChild() throws {
        var child: Subprocess? = try Subprocess("/bin/sleep", arguments: ["30"], environment: [])
        let pid = try #require(child?.pid)
        #expect(kill(pid, 0) == 0)
        child = nil
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    /// The output is all there when wait returns, even when a process it started keeps the
    /// pipe open: the reader does not wait for that one.
    @Test func aBackgroundGrandchildDoesNotHoldUpWait() throws {
        let child = try Subprocess(Self.shell, arguments: ["-c", "sleep 30 & echo started"], environment: [],
                                   newProcessGroup: true)
        #expect(child.wait(timeout: 10) == .exited(0))
        #expect(child.lines(.output) == ["started"])
        _ = kill(-child.pid, SIGKILL)
    }

    /// Many spawns from several threads at once: each child has only descriptors 0, 1 and 2
    /// (none of the pipes being made for the others), and none is left open here afterwards.
    @Test func parallelSpawnsLeakNoDescriptor() throws {
        let before = openDescriptors()
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<15 {
                do {
                    // ls opens the directory it lists as 3: anything more was inherited.
                    let child = try Subprocess("/bin/ls", arguments: ["/proc/self/fd"], environment: [],
                                               input: round % 2 == 0 ? .pipe : .null)
                    let outcome = child.wait(timeout: 60)
                    let descriptors = child.lines(.output)
                    if outcome != .exited(0) || descriptors != ["0", "1", "2", "3"] {
                        failures.withLock { $0.append("thread \(thread) round \(round): \(outcome) \(descriptors)") }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(thread) round \(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        // Reader threads close their ends before wait returns. Other tests of the process open
        // descriptors meanwhile, hence the margin; a leak would be one or more per spawn (120).
        let after = openDescriptors()
        #expect(after.subtracting(before).count < 8, "before \(before.sorted()), after \(after.sorted())")
    }

    /// The descriptors open in this process (/proc/self/fd, without the one listing it).
    private func openDescriptors() -> Set<String> {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = String(dirfd(directory))
        var names: Set<String> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." && name != own { names.insert(name) }
        }
        return names
    }

    /// Polls `condition` every 10 ms, up to 30 s.
    private func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
