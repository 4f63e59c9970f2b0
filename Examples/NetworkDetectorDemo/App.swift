// Stands in for the app: runs the view model's two checks, then exits (0: both reachable).
//
//   swift run NetworkDetectorDemo                               # reachd's verdict
//   swift run NetworkDetectorDemo --url https://api.example.com/health [--timeout S]
//   swift run NetworkDetectorDemo --url … --block    # no main loop: main waits on a semaphore
import Foundation
import Reachability

@available(*, deprecated, message: "drives the iOS demo's code")
@main
enum NetworkDetectorDemo {
    static func main() {
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
        var arguments = CommandLine.arguments.dropFirst()
        var block = false
        while let argument = arguments.popFirst() {
            switch argument {
            case "--url": NetworkDetector.sharedInstance.backendURL = arguments.popFirst().flatMap { URL(string: $0) }
            case "--timeout": arguments.popFirst().flatMap(TimeInterval.init).map { NetworkDetector.sharedInstance.timeout = $0 }
            case "--block": block = true
            case "--help", "-h":
                FileHandle.standardOutput.write(Data("usage: NetworkDetectorDemo [--url URL] [--timeout S] [--block]\n".utf8))
                exit(0)
            default:
                FileHandle.standardError.write(Data("usage: NetworkDetectorDemo [--url URL] [--timeout S] [--block]\n".utf8))
                exit(2)
            }
        }
        let model = NetworkStatusViewModel()
        let reachable = Tally()
        model.show = { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            if line.contains(": reachable") { reachable.add() }
        }
        if block {
            // A command-line tool without a main loop: the completion must not wait for one.
            let answered = DispatchSemaphore(value: 0)
            model.checkNetwork { answered.signal() }
            answered.wait()
            exit(reachable.count == 1 ? 0 : 1)
        }
        let group = DispatchGroup()
        group.enter(); group.enter()
        model.checkNetwork { group.leave() }
        model.observeNetwork { group.leave() }
        group.notify(queue: .main) { exit(reachable.count == 2 ? 0 : 1) }
        withExtendedLifetime(model) { dispatchMain() }
    }
}

final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
