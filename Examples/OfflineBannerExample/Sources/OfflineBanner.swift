import Foundation
import Reachability

/// A piece of an app: the banner it shows for the network it is on. It takes its facts from a
/// `Reachability`, so a test can hand it one driven by a `SimulatedNetwork`.
public final class OfflineBanner: @unchecked Sendable {
    private let reachability: Reachability
    private let lock = NSLock()
    private var _text: String?

    /// The banner now (nil: no banner).
    public var text: String? { lock.withLock { _text } }
    /// Called after every change of `text`.
    public var onChange: (@Sendable (String?) -> Void)?

    public init(reachability: Reachability) {
        self.reachability = reachability
    }

    public func start() throws {
        reachability.whenReachable = { [weak self] r in
            guard let self else { return }
            let status = r.status
            if status?.connectivity == .portal {
                self.show("Sign in to the network")
            } else if status?.status == .wwan2G {
                self.show("Slow connection: images are off")
            } else {
                self.show(nil)
            }
        }
        reachability.whenUnreachable = { [weak self] _ in self?.show("You are offline") }
        try reachability.startNotifier()
    }

    public func stop() { reachability.stopNotifier() }

    private func show(_ text: String?) {
        lock.withLock { _text = text }
        onChange?(text)
    }
}
