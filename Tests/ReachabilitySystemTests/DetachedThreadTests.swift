import Dispatch
import Glibc
import ReachabilitySystem
import Synchronization
import Testing

@Suite struct DetachedThreadTests {
    /// What /proc says the calling thread is called.
    private static func callingThreadName() -> String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return String(decoding: buffer[0..<max(count, 0)], as: UTF8.self)
    }

    /// Runs `body` on a detached thread and waits for it.
    private static func onThread<T: Sendable>(name: String?, stackSize: Int? = nil,
                                              _ body: @escaping @Sendable () -> T) throws -> T? {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        try DetachedThread.start(name: name, stackSize: stackSize) {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// The body runs on another thread, which carries the name given (as /proc shows it).
    @Test func runsTheBodyOnANamedThreadOfItsOwn() throws {
        let caller = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let seen = try Self.onThread(name: "rd-test-thread") {
            (thread: UInt(bitPattern: Int(bitPattern: pthread_self())), name: Self.callingThreadName())
        }
        #expect(seen != nil)
        #expect(seen?.thread != caller)
        #expect(seen?.name == "rd-test-thread\n")
    }

    /// A name longer than the kernel keeps (15 bytes) is not set rather than cut short; a small
    /// stack asked for still runs the body.
    @Test func aLongNameIsLeftOut() throws {
        let name = try Self.onThread(name: "a-name-longer-than-fifteen-bytes", stackSize: 256 * 1024) { Self.callingThreadName() }
        #expect(name != nil)
        #expect(name?.hasPrefix("a-name-longer") == false)
    }
}
