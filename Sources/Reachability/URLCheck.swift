import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What one check of the app's URL found: the iOS NetworkDetector's `(isReachable, statusCode, error)`.
struct SeedAnswer: Sendable, Equatable {
    var isReachable: Bool
    /// The HTTP status of the answer; 0 without one.
    var statusCode: Int
    var error: NetworkDetectorError?
}

/// A check that answers once: `finish` hands the first answer to `deliver`, unless `cancel()`
/// came first; every later `finish` or `cancel` does nothing. `waitUntilDone()` (tests) returns
/// once the work behind it has ended for good, so nothing can call `finish` any more.
final class OneShotCheck: @unchecked Sendable {
    private enum State {
        case pending(@Sendable (SeedAnswer) -> Void)
        case over
    }

    private let state: Mutex<State>
    private let done = DispatchGroup()
    private let onCancel: Mutex<(@Sendable () -> Void)?> = Mutex(nil)

    init(deliver: @escaping @Sendable (SeedAnswer) -> Void) {
        state = Mutex(.pending(deliver))
    }

    /// The work started; `workEnded()` must follow.
    func workBegan() { done.enter() }
    func workEnded() { done.leave() }

    /// What `cancel()` stops (the HTTP request).
    func setCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        onCancel.withLock { $0 = handler }
    }

    /// Delivers `answer` when it is the first; true if it was.
    @discardableResult
    func finish(_ answer: SeedAnswer) -> Bool {
        let deliver: (@Sendable (SeedAnswer) -> Void)? = state.withLock { state in
            guard case .pending(let deliver) = state else { return nil }
            state = .over
            return deliver
        }
        deliver?(answer)
        return deliver != nil
    }

    /// Nothing is delivered after this returns (a delivery already running on another thread
    /// may still complete).
    func cancel() {
        let wasPending: Bool = state.withLock { state in
            guard case .pending = state else { return false }
            state = .over
            return true
        }
        if wasPending { onCancel.withLock { $0 }?() }
    }

    /// Blocks until the work behind the check has ended (test hook).
    func waitUntilDone(timeout: TimeInterval) -> Bool {
        done.wait(timeout: .now() + timeout) == .success
    }
}

/// One HTTP GET of the app's own URL, the iOS NetworkDetector's way: no cache, redirects not followed (a 301 is
/// the answer), the status of the answer decides, a deadline of `timeout` seconds.
///
/// Only the response head is waited for; the body is not read. The answer is given by the
/// first of: the response head, the request failing, the deadline.
final class URLCheck: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let url: URL
    let timeout: TimeInterval
    let accepting: Range<Int>
    private let check: OneShotCheck
    /// Set in `start`, read from delegate and timer callbacks.
    private let handles = Mutex(Handles())

    /// A task and a Dispatch source may be cancelled from any thread.
    private struct Handles: @unchecked Sendable {
        var task: URLSessionTask?
        var deadline: DispatchSourceTimer?
    }

    init(url: URL, timeout: TimeInterval, accepting: Range<Int>, check: OneShotCheck) {
        self.url = url
        self.timeout = timeout
        self.accepting = accepting
        self.check = check
    }

    func start() {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            check.finish(SeedAnswer(isReachable: false, statusCode: 0, error: .invalidURL(url.absoluteString)))
            return
        }
        check.workBegan()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        // Our own deadline decides; the session's timeouts only make sure its work ends.
        configuration.timeoutIntervalForRequest = timeout + 5
        configuration.timeoutIntervalForResource = timeout + 5
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeout + 5)
        request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        let task = session.dataTask(with: request)
        let started = Handles(task: task)
        handles.withLock { $0.task = started.task }

        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + timeout)
        let seconds = timeout
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.check.finish(SeedAnswer(isReachable: false, statusCode: 0, error: .timedOut(seconds: seconds)))
            self.currentTask?.cancel()
        }
        let armed = Handles(deadline: timer)
        handles.withLock { $0.deadline = armed.deadline }
        check.setCancelHandler { [weak self] in self?.currentTask?.cancel() }
        timer.resume()
        task.resume()
        // The session lets go of its delegate (us) once the task has ended.
        session.finishTasksAndInvalidate()
    }

    private var currentTask: URLSessionTask? { handles.withLock { $0 }.task }

    private func answer(status: Int) {
        let reachable = accepting.contains(status)
        check.finish(SeedAnswer(isReachable: reachable, statusCode: status, error: reachable ? nil : .httpStatus(status)))
    }

    // MARK: - URLSession delegate (on the session's delegate queue)

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        // The redirect is the answer (the app's backend answering 301 is up).
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse { answer(status: http.statusCode) }
        completionHandler(.cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if let http = task.response as? HTTPURLResponse {
            answer(status: http.statusCode)
        } else if let error {
            check.finish(SeedAnswer(isReachable: false, statusCode: 0, error: Self.describe(error, timeout: timeout)))
        } else {
            check.finish(SeedAnswer(isReachable: false, statusCode: 0, error: .requestFailed("no HTTP answer")))
        }
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
        let ended = handles.withLock { handles in
            defer { handles = Handles() }
            return handles
        }
        ended.deadline?.cancel()
        check.workEnded()
    }

    /// What the app needs to know about a failed request.
    static func describe(_ error: Error, timeout: TimeInterval) -> NetworkDetectorError {
        guard let urlError = error as? URLError else { return .requestFailed("\(error)") }
        switch urlError.code {
        case .timedOut: return .timedOut(seconds: timeout)
        case .cannotConnectToHost: return .requestFailed("cannot connect to \(urlError.failingURL?.host ?? "the server") (connection refused or no route)")
        case .cannotFindHost, .dnsLookupFailed: return .requestFailed("host \(urlError.failingURL?.host ?? "") not found")
        case .networkConnectionLost: return .requestFailed("the connection was lost")
        case .notConnectedToInternet: return .requestFailed("not connected to the internet")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .requestFailed("TLS failed: \(urlError.localizedDescription)")
        default: return .requestFailed("\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
        }
    }
}

/// Runs completions on the main queue when the app runs a main loop, else on a fallback queue.
///
/// The first `NetworkDetector` puts a block on the main queue. The app runs a main loop when
/// that block has run: `dispatchMain()`, `RunLoop.main.run()` and an `async` main all drain the
/// main queue. A completion due before then (an answer that came back before the app entered
/// its loop) waits for the block up to `grace` seconds, then runs on the fallback queue: a
/// program whose main thread waits on a semaphore is answered, not deadlocked.
enum MainLoop {
    private struct State {
        var seen = false
        var waiting: [Int: @Sendable () -> Void] = [:]
        var next = 0
    }

    private static let state = Mutex(State())
    static let grace: TimeInterval = 0.25

    /// Arms the watch (once per process).
    static let watch: Void = {
        DispatchQueue.main.async { mainQueueRan() }
    }()

    /// True once the main queue has been seen running.
    static var isRunning: Bool {
        _ = watch
        return state.withLock { $0.seen }
    }

    /// Runs `work` once: on the main queue if the main loop runs (or starts within `grace`),
    /// else on `fallback`.
    static func run(_ work: @escaping @Sendable () -> Void, fallback: DispatchQueue) {
        _ = watch
        let id: Int? = state.withLock { state in
            guard !state.seen else { return nil }
            let id = state.next
            state.next += 1
            state.waiting[id] = work
            return id
        }
        guard let id else {
            DispatchQueue.main.async(execute: work)
            return
        }
        fallback.asyncAfter(deadline: .now() + grace) {
            let work = state.withLock { $0.waiting.removeValue(forKey: id) }
            work?()
        }
    }

    /// On the main queue.
    private static func mainQueueRan() {
        let works: [@Sendable () -> Void] = state.withLock { state in
            state.seen = true
            defer { state.waiting = [:] }
            return state.waiting.sorted { $0.key < $1.key }.map(\.value)
        }
        for work in works { work() }
    }
}
