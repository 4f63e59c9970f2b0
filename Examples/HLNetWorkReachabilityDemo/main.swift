// The HLNetWorkReachability demo, ported: a notification observer that prints the network type
// ("WiFi", "4G", …) for the current state and every change.
//
//   swift run HLNetWorkReachabilityDemo                 # until Ctrl-C
//   swift run HLNetWorkReachabilityDemo --count 3       # stop after three changes
//   swift run HLNetWorkReachabilityDemo --host example.com
import Foundation
import Reachability

/// The demo's label for each status (the original's labels, in English).
func label(for status: NetworkStatus) -> String {
    switch status {
    case .notReachable: return "Not reachable"
    case .unknown: return "Unknown network"
    case .ethernet: return "Ethernet"
    case .wifi: return "WiFi"
    case .wwan: return "Cellular"
    case .wwan2G: return "2G"
    case .wwan3G: return "3G"
    case .wwan4G: return "4G"
    case .wwan5G: return "5G"
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// `--count N` and `--host HOST`.
func parseArguments() -> (count: Int?, host: String?) {
    var arguments = CommandLine.arguments.dropFirst()
    var count: Int?
    var host: String?
    while let argument = arguments.popFirst() {
        switch argument {
        case "--count": count = arguments.popFirst().flatMap(Int.init)
        case "--host": host = arguments.popFirst()
        default:
            FileHandle.standardError.write(Data("usage: HLNetWorkReachabilityDemo [--count N] [--host HOST]\n".utf8))
            exit(2)
        }
    }
    return (count, host)
}

let (count, host) = parseArguments()

let reachability: Reachability
do {
    reachability = try host.map { try Reachability(hostname: $0) } ?? Reachability()
} catch {
    FileHandle.standardError.write(Data("HLNetWorkReachabilityDemo: \(error)\n".utf8))
    exit(1)
}

let seen = Counter()
let observer = NotificationCenter.default.addObserver(forName: .reachabilityChanged, object: reachability, queue: nil) { note in
    guard let current = note.object as? Reachability else { return }
    say(label(for: current.currentReachabilityStatus))
    if let count, seen.increment() >= count { exit(0) }
}

do {
    try reachability.startNotifier()
} catch {
    FileHandle.standardError.write(Data("HLNetWorkReachabilityDemo: \(error)\n".utf8))
    exit(1)
}
withExtendedLifetime((reachability, observer)) { dispatchMain() }

/// Counts notifications (they arrive on one serial queue; the lock keeps Swift 6 satisfied).
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() -> Int { lock.withLock { value += 1; return value } }
}
