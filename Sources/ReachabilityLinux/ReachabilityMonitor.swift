import Dispatch
import Foundation
import ReachabilityCore

/// Keeps a live picture of links, addresses and default routes from netlink and emits a
/// `ReachabilityEvent` the moment the machine's `Status` changes.
///
/// One serial queue owns all state; observers are called on that queue and must not block it.
public final class ReachabilityMonitor: @unchecked Sendable {
    /// What the monitor watches and how it names things.
    public struct Configuration: Sendable {
        /// Where sysfs is mounted; tests point it at a fake tree.
        public var sysfsRoot: String = "/sys"
        /// `Kind.GLOB=` overrides, first match wins.
        public var kindOverrides: [(glob: String, kind: InterfaceKind)] = []
        /// Interfaces matching these globs are metered (`expensive`).
        public var meteredInterfaces: [String] = []
        /// Interfaces matching these globs are ignored altogether.
        public var ignoredInterfaces: [String] = []
        /// Hold-down before evaluating a change, in milliseconds (0: evaluate at once).
        public var debounceMilliseconds: Int = 0
        /// The sequence number of the initial state (see `StatusTracker`).
        public var firstSequence: Int = 0

        public init() {}
    }

    /// Identifies an observer for `removeObserver`.
    public struct ObserverToken: Hashable, Sendable { let id: Int }

    public let configuration: Configuration
    public let queue: DispatchQueue

    public init(configuration: Configuration = Configuration(), queue: DispatchQueue = DispatchQueue(label: "reachd.monitor")) {
        self.configuration = configuration
        self.queue = queue
    }
}
