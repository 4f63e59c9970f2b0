// Seed 004's NetworkDetector demo, ported: does the internet really answer?
//
//   swift run NetworkDetectorDemo            # one check (reachd runs its connectivity check now)
//   swift run NetworkDetectorDemo --watch    # then print every change of connectivity
import Foundation
import Reachability

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let watch = CommandLine.arguments.dropFirst().contains("--watch")
let detector = NetworkDetector.shared

let result = await detector.check()
if result.isReachable {
    say("Network is reachable" + (result.statusCode.map { " (HTTP \($0))" } ?? ""))
} else {
    say("Network is not reachable: \(result.error.map { "\($0)" } ?? result.connectivity.rawValue)"
        + (result.statusCode.map { " (HTTP \($0))" } ?? ""))
}

if watch {
    for await connectivity in detector.connectivityChanges {
        say("connectivity: \(connectivity.rawValue)")
    }
} else {
    exit(result.isReachable ? 0 : 1)
}
