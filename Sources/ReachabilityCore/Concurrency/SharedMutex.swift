import Synchronization

/// A `Mutex` that escaping closures can share. `Mutex` is noncopyable, so a closure cannot
/// capture one itself; objects that own state hold a `Mutex` directly instead.
package final class SharedMutex<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, exclusively.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
}
