import Dispatch

/// The serial queue that owns an object's state, and whether the calling code already runs on
/// it. Objects that share a queue with others (a server on the monitor's queue, whose observers
/// call back on it) run a body inline when already there, as `sync` from there would deadlock.
package final class QueueConfinement: @unchecked Sendable {
    package let queue: DispatchQueue
    // Set on `queue` for as long as this object lives; never reassigned.
    private let key = DispatchSpecificKey<Void>()

    package init(_ queue: DispatchQueue) {
        self.queue = queue
        queue.setSpecific(key: key, value: ())
    }

    // A key freed while its value stays on a long-lived queue could, reallocated at the same
    // address, make a later object believe it runs there.
    deinit { queue.setSpecific(key: key, value: nil) }

    /// True when the calling code runs on `queue`.
    package var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }

    /// Runs `body` on `queue`: inline when already there, else `sync`.
    package func sync<T>(_ body: () throws -> T) rethrows -> T {
        if isCurrent { return try body() }
        return try queue.sync(execute: body)
    }
}

/// An object whose state lives on one serial queue (`queueConfinement.queue`).
package protocol QueueConfined {
    var queueConfinement: QueueConfinement { get }
}

extension QueueConfined {
    /// Runs `body` on the object's queue: inline when already there, else `sync`.
    package func onQueue<T>(_ body: () throws -> T) rethrows -> T {
        try queueConfinement.sync(body)
    }
}
