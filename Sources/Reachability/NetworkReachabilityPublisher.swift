import Dispatch
import Foundation
import Synchronization

/// The iOS `NetworkDetector`'s `networkReachabilityPublisher` without Combine: a one-shot publisher with
/// Combine's `sink`, `receive(on:)` and `AnyCancellable`, and `values` for `for try await`.
///
/// Every `sink` (and every `values` access) runs one check. It publishes `true` then
/// `.finished` when reachable; otherwise it fails with the `NetworkDetectorError`, whose
/// `statusCode` is the HTTP status (0 without an answer), as the iOS publisher failed with
/// the status. Values arrive on the `receive(on:)` queue, else the detector's `completionQueue`.
///
/// ```swift
/// NetworkDetector.shared.networkReachabilityPublisher
///     .sink(receiveCompletion: { completion in
///         if case .failure(let error) = completion { print("down, HTTP \(error.statusCode)") }
///     }, receiveValue: { _ in print("up") })
///     .store(in: &cancellables)
/// ```
public struct NetworkReachabilityPublisher: Sendable {
    public typealias Output = Bool
    public typealias Failure = NetworkDetectorError

    /// Combine's `Subscribers.Completion`.
    public enum Completion: Sendable, Equatable {
        case finished
        case failure(NetworkDetectorError)
    }

    let detector: NetworkDetector
    let url: URL?
    let timeout: TimeInterval?
    let accepting: Range<Int>?
    let queue: DispatchQueue?

    /// The same publisher delivering on `queue`.
    public func receive(on queue: DispatchQueue) -> NetworkReachabilityPublisher {
        NetworkReachabilityPublisher(detector: detector, url: url, timeout: timeout, accepting: accepting, queue: queue)
    }

    /// Runs the check; `receiveValue(true)` then `receiveCompletion(.finished)`, or
    /// `receiveCompletion(.failure(error))`. Nothing arrives once the cancellable is cancelled
    /// or released (as in Combine: keep it, e.g. `.store(in: &cancellables)`).
    public func sink(receiveCompletion: @escaping @Sendable (Completion) -> Void,
                     receiveValue: @escaping @Sendable (Output) -> Void) -> AnyCancellable {
        let check = detector.startSeedCheck(url: url, timeout: timeout, accepting: accepting, queue: queue) { answer in
            if answer.isReachable {
                receiveValue(true)
                receiveCompletion(.finished)
            } else {
                receiveCompletion(.failure(answer.error ?? .httpStatus(answer.statusCode)))
            }
        }
        return AnyCancellable(check)
    }

    /// The check as an async sequence: `true` once, or the error thrown. Ending the loop
    /// early cancels the check.
    public var values: AsyncThrowingStream<Output, Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Output.self, throwing: Error.self)
        let check = detector.startSeedCheck(url: url, timeout: timeout, accepting: accepting,
                                            queue: queue ?? DispatchQueue.global()) { answer in
            if answer.isReachable {
                continuation.yield(true)
                continuation.finish()
            } else {
                continuation.finish(throwing: answer.error ?? .httpStatus(answer.statusCode))
            }
        }
        continuation.onTermination = { _ in check.cancel() }
        return stream
    }
}

/// Combine's `AnyCancellable`: cancels on `cancel()` and when released.
public final class AnyCancellable: Hashable, @unchecked Sendable {
    let check: OneShotCheck?
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(_ check: OneShotCheck) {
        self.check = check
        onCancel = Mutex { check.cancel() }
    }

    /// Runs `cancel` once, on `cancel()` or when released.
    public init(_ cancel: @escaping @Sendable () -> Void) {
        check = nil
        onCancel = Mutex(cancel)
    }

    public func cancel() {
        let cancel = onCancel.withLock { handler in
            defer { handler = nil }
            return handler
        }
        cancel?()
    }

    deinit { cancel() }

    public func store(in set: inout Set<AnyCancellable>) { set.insert(self) }
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        collection.append(self)
    }

    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
