import Foundation
import Testing
@testable import Reachability
import TestSupport

/// `NetworkDetector` with the app's own URL, the iOS class's contract: 200–399 is reachable, a
/// redirect is not followed, 10 s timeout, no cache, status 0 without an answer — through the
/// async form, the completion and the publisher, against a backend on loopback.
@Suite("NetworkDetector: the app's own URL", .serialized)
struct NetworkDetectorURLTests {
    /// What every form must report for one URL.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var path: String?            // nil: the refusing port
        var timeout: TimeInterval = NetworkDetector.defaultTimeout
        var accepting: Range<Int> = NetworkDetector.defaultAcceptedStatusCodes
        var reachable: Bool
        var status: Int
        var error: ErrorKind?
        var description: String { name }
    }

    enum ErrorKind: Equatable, Sendable {
        case httpStatus(Int), timedOut, requestFailed

        init?(_ error: NetworkDetectorError?) {
            switch error {
            case .none: return nil
            case .httpStatus(let code): self = .httpStatus(code)
            case .timedOut: self = .timedOut
            case .requestFailed: self = .requestFailed
            case .some(let other): Issue.record("unexpected error \(other)"); return nil
            }
        }
    }

    static let cases: [Case] = [
        Case(name: "200 with a body", path: "/ok", reachable: true, status: 200, error: nil),
        Case(name: "301, not followed", path: "/moved", reachable: true, status: 301, error: nil),
        Case(name: "404", path: "/missing", reachable: false, status: 404, error: .httpStatus(404)),
        Case(name: "a hang: the timeout", path: "/hang", timeout: 1, reachable: false, status: 0, error: .timedOut),
        Case(name: "a refused port", path: nil, reachable: false, status: 0, error: .requestFailed),
        Case(name: "404 accepted by a wider range", path: "/missing", accepting: 200..<500, reachable: true, status: 404, error: nil),
        Case(name: "301 refused by a narrower range", path: "/moved", accepting: 200..<300, reachable: false, status: 301, error: .httpStatus(301)),
    ]

    let server: BackendServer
    let refusing: RefusingPort

    init() throws {
        server = try BackendServer()
        refusing = try RefusingPort()
    }

    func url(_ testCase: Case) -> URL { testCase.path.map(server.url) ?? refusing.url }

    @Test("check(url:timeout:accepting:)", arguments: cases)
    func asyncForm(_ testCase: Case) async {
        let result = await NetworkDetector(socketPath: "/nonexistent").check(url: url(testCase), timeout: testCase.timeout,
                                                                              accepting: testCase.accepting)
        #expect(result.isReachable == testCase.reachable)
        #expect(result.statusCode == testCase.status)
        #expect(ErrorKind(result.error) == testCase.error)
        #expect(result.url == url(testCase))
        if testCase.error == .timedOut { #expect(result.error == .timedOut(seconds: testCase.timeout)) }
    }

    @Test("checkNetworkReachability(url:…): the completion, exactly once", arguments: cases)
    func completionForm(_ testCase: Case) async throws {
        let detector = NetworkDetector(socketPath: "/nonexistent")
        let queue = DispatchQueue(label: "test.completion")
        detector.completionQueue = queue
        let answers = Recorder<SeedAnswer>()

        // The public form …
        detector.checkNetworkReachability(url: url(testCase), timeout: testCase.timeout, accepting: testCase.accepting) {
            isReachable, statusCode, error in
            answers.append(SeedAnswer(isReachable: isReachable, statusCode: statusCode, error: error as? NetworkDetectorError))
        }
        #expect(await eventually(timeout: 15) { answers.count == 1 })

        // … and the same call with its handle: once the request's work has ended for good
        // (session invalidated, deadline cancelled) and the queue is drained, one answer it is.
        let counted = Recorder<SeedAnswer>()
        let check = detector.startSeedCheck(url: url(testCase), timeout: testCase.timeout, accepting: testCase.accepting,
                                            queue: queue) { counted.append($0) }
        #expect(check.waitUntilDone(timeout: 15))
        queue.sync {}
        #expect(counted.count == 1)

        for answer in answers.all + counted.all {
            #expect(answer.isReachable == testCase.reachable)
            #expect(answer.statusCode == testCase.status)
            #expect(ErrorKind(answer.error) == testCase.error)
        }
    }

    @Test("networkReachabilityPublisher(url:…): true then finished, or a failure carrying the status", arguments: cases)
    func publisherForm(_ testCase: Case) async throws {
        let detector = NetworkDetector(socketPath: "/nonexistent")
        let queue = DispatchQueue(label: "test.publisher")
        let values = Recorder<Bool>(), completions = Recorder<NetworkReachabilityPublisher.Completion>()
        let publisher = detector.networkReachabilityPublisher(url: url(testCase), timeout: testCase.timeout,
                                                              accepting: testCase.accepting)
        var cancellables = Set<AnyCancellable>()
        let cancellable = publisher.receive(on: queue)
            .sink(receiveCompletion: { completions.append($0) }, receiveValue: { values.append($0) })
        cancellable.store(in: &cancellables)
        #expect(cancellable.check?.waitUntilDone(timeout: 15) == true)
        queue.sync {}
        if testCase.reachable {
            #expect(values.all == [true])
            #expect(completions.all == [.finished])
        } else {
            #expect(values.all.isEmpty)
            guard completions.count == 1, case .failure(let error) = completions.all[0] else {
                Issue.record("expected one failure, got \(completions.all)")
                return
            }
            #expect(error.statusCode == testCase.status)
            #expect(ErrorKind(error) == testCase.error)
        }

        // The async-sequence form of the same publisher.
        var received: [Bool] = []
        do {
            for try await value in publisher.values { received.append(value) }
            #expect(testCase.reachable && received == [true])
        } catch let error as NetworkDetectorError {
            #expect(!testCase.reachable && received.isEmpty)
            #expect(error.statusCode == testCase.status)
            #expect(ErrorKind(error) == testCase.error)
        }
    }

    @Test("no cache: every check is a request; a redirect is not followed")
    func noCacheNoRedirect() async {
        let detector = NetworkDetector(socketPath: "/nonexistent")
        for _ in 0..<3 { #expect(await detector.check(url: server.url("/ok")).statusCode == 200) }
        #expect(await detector.check(url: server.url("/moved")).statusCode == 301)
        #expect(server.requests == ["/ok", "/ok", "/ok", "/moved"])
    }

    @Test("backendURL: the iOS class's calls check the app's URL with the detector's timeout and range")
    func backendURL() async {
        let detector = NetworkDetector(source: .daemon, socketPath: "/nonexistent")
        detector.backendURL = server.url("/missing")
        detector.completionQueue = DispatchQueue(label: "test.backend")
        let answers = Recorder<String>()
        detector.checkNetworkReachability { isReachable, statusCode, error in
            answers.append("\(isReachable) \(statusCode) \(error.map { "\($0)" } ?? "nil")")
        }
        #expect(await eventually { answers.count == 1 })
        #expect(answers.all == ["false 404 the server answered HTTP 404"])

        detector.acceptedStatusCodes = 200..<500
        var values: [Bool] = []
        do {
            for try await value in detector.networkReachabilityPublisher.values { values.append(value) }
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(values == [true])
        #expect(server.requests == ["/missing", "/missing"])

        // Without backendURL the same calls give reachd's verdict (here: no daemon).
        detector.backendURL = nil
        let verdict = Recorder<String>()
        detector.checkNetworkReachability { isReachable, statusCode, error in
            verdict.append("\(isReachable) \(statusCode) \(error.map { "\($0)" } ?? "nil")")
        }
        #expect(await eventually { verdict.count == 1 })
        #expect(verdict.all == ["false 0 reachd is not running (no socket at /nonexistent)"])
    }

    @Test("a cancelled sink delivers nothing, and the hanging request ends")
    func cancel() {
        let detector = NetworkDetector(socketPath: "/nonexistent")
        let queue = DispatchQueue(label: "test.cancel")
        let delivered = Recorder<String>()
        let cancellable = detector.networkReachabilityPublisher(url: server.url("/hang"), timeout: 30).receive(on: queue)
            .sink(receiveCompletion: { delivered.append("\($0)") }, receiveValue: { delivered.append("\($0)") })
        #expect(waitUntil(timeout: 10) { server.requests == ["/hang"] })
        cancellable.cancel()
        #expect(cancellable.check?.waitUntilDone(timeout: 10) == true)
        queue.sync {}
        #expect(delivered.all.isEmpty)
    }

    @Test("not an http(s) URL: invalidURL at once, status 0")
    func invalidURL() async throws {
        let url = try #require(URL(string: "ftp://127.0.0.1/file"))
        let result = await NetworkDetector(socketPath: "/nonexistent").check(url: url)
        #expect(result == NetworkDetector.URLResult(isReachable: false, statusCode: 0, error: .invalidURL("ftp://127.0.0.1/file"), url: url))
    }

    @Test("completionQueue .main: the completion runs on the main queue")
    func explicitMainQueue() async {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 42)
        defer { DispatchQueue.main.setSpecific(key: key, value: nil) }
        let detector = NetworkDetector(socketPath: "/nonexistent")
        detector.completionQueue = .main
        let onMain = Recorder<Bool>()
        detector.checkNetworkReachability(url: server.url("/ok")) { _, _, _ in
            onMain.append(DispatchQueue.getSpecific(key: key) == 42)
        }
        #expect(await eventually(timeout: 15) { onMain.count == 1 })
        #expect(onMain.all == [true])
    }
}

/// The default completion queue in real programs: the NetworkDetectorDemo (the iOS demo's view
/// model) under `dispatchMain()` gets its completion on the main queue; with its main thread
/// waiting on a semaphore it gets it elsewhere instead of deadlocking.
@Suite("NetworkDetector: main-queue delivery in a real program", .serialized)
struct NetworkDetectorMainLoopTests {
    static var demo: String {
        if let dir = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"], !dir.isEmpty { return "\(dir)/NetworkDetectorDemo" }
        return "\(Paths.packageRoot)/.build/debug/NetworkDetectorDemo"
    }

    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        return try sh("timeout 30 \(Self.demo) \(quoted)", check: false)
    }

    @Test("dispatchMain(): the completion and the publisher run on the main queue")
    func dispatchMainDelivers() throws {
        let server = try BackendServer()
        let refusing = try RefusingPort()
        // The fastest answer there is (a refused connect) still finds the main loop.
        for (url, reachable) in [(server.url("/ok"), true), (refusing.url, false)] {
            let (status, output) = try run(["--url", url.absoluteString])
            #expect(status == (reachable ? 0 : 1), "\(output)")
            let callback = output.split(separator: "\n").first { $0.hasPrefix("callback:") }
            #expect(callback?.hasSuffix("[main queue]") == true, "\(output)")
            #expect(output.contains(reachable ? "publisher: reachable true" : "publisher: failed with HTTP 0"), "\(output)")
        }
    }

    @Test("no main loop (main waits on a semaphore): answered on a private queue, no deadlock")
    func blockedMainIsNotDeadlocked() throws {
        let server = try BackendServer()
        let (status, output) = try run(["--url", server.url("/ok").absoluteString, "--block"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("callback: reachable (HTTP 200) [other queue]"), "\(output)")
    }
}

/// The demos answer `--help` as any command does: the usage on stdout, exit 0; an unknown
/// argument is a usage error (exit 2).
@Suite struct DemoHelpTests {
    @Test(arguments: ["ReachabilityDemo", "HLNetWorkReachabilityDemo", "NetworkDetectorDemo"])
    func help(_ demo: String) throws {
        let directory = ProcessInfo.processInfo.environment["REACHD_BIN_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "\(Paths.packageRoot)/.build/debug"
        for flag in ["--help", "-h"] {
            let help = try sh("timeout 30 '\(directory)/\(demo)' \(flag)", check: false)
            #expect(help.status == 0, "\(demo) \(flag): \(help.output)")
            #expect(help.output.hasPrefix("usage: \(demo) "), "\(demo) \(flag): \(help.output)")
        }
        #expect(try sh("timeout 30 '\(directory)/\(demo)' --bogus 2>/dev/null", check: false).status == 2)
    }
}
