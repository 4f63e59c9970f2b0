import Synchronization

/// How many objects of a kind are alive, counted from any thread (their `deinit` runs wherever
/// the last reference goes).
final class InstanceCount: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ delta: Int) { count.add(delta, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}
