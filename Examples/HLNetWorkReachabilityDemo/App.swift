// Stands in for the app delegate: loads the view controller, runs the main loop.
//
//   swift run HLNetWorkReachabilityDemo                    # internet connection + www.apple.com
//   swift run HLNetWorkReachabilityDemo --no-host --count 1
import Foundation

@available(*, deprecated, message: "drives the iOS demo's code")
@main
enum HLNetWorkReachabilityDemo {
    static func main() {
        var arguments = CommandLine.arguments.dropFirst()
        let controller = ViewController()
        var remaining: Int?
        while let argument = arguments.popFirst() {
            switch argument {
            case "--host": controller.remoteHostName = arguments.popFirst()
            case "--no-host": controller.remoteHostName = nil
            case "--count": remaining = arguments.popFirst().flatMap(Int.init)
            case "--help", "-h":
                FileHandle.standardOutput.write(Data("usage: HLNetWorkReachabilityDemo [--host HOST | --no-host] [--count N]\n".utf8))
                exit(0)
            default:
                FileHandle.standardError.write(Data("usage: HLNetWorkReachabilityDemo [--host HOST | --no-host] [--count N]\n".utf8))
                exit(2)
            }
        }
        let lock = NSLock()
        controller.statusLabel = { text in
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
            lock.withLock {
                guard let left = remaining else { return }
                remaining = left - 1
                if left - 1 <= 0 { exit(0) }
            }
        }
        controller.viewDidLoad()
        withExtendedLifetime(controller) { dispatchMain() }
    }
}
