// The README's Swift snippet, byte for byte between the
// markers (`make external-package-test` checks that), built as an outside package would build
// it. It runs to completion: against the daemon at REACHD_SOCKET, or in-process when none answers.
import Foundation
import Reachability

// --- snippet ---
let reachability = try Reachability()                       // or Reachability(hostname: "example.com")
reachability.whenReachable = { r in print(r.currentReachabilityStatus) }   // .wifi, .wwan4G, …
reachability.whenUnreachable = { _ in print("not reachable") }
let observer = NotificationCenter.default.addObserver(forName: .reachabilityChanged, object: reachability, queue: nil) { note in
    print("changed:", (note.object as? Reachability)?.connection.description ?? "?")
}
try reachability.startNotifier()                             // first callback: the current state
print(reachability.currentReachabilityStatus)                // NetworkStatus, the wire enum
print(reachability.connection)                               // .unavailable, .wifi, .cellular, .ethernet (Reachability.swift's)
reachability.stopNotifier()

// NWPathMonitor's shape.
let monitor = PathMonitor()
monitor.pathUpdateHandler = { path in print(path.status) /* .satisfied, .unsatisfied, .requiresConnection */ }
monitor.start(queue: .global())
for await path in PathMonitor().paths {
    if path.usesInterfaceType(.wifi) && !path.isExpensive { print("cheap Wi-Fi") }
    break
}

// The iOS NetworkDetector's check: does the internet really answer?
let result = await NetworkDetector.shared.check()             // isReachable, statusCode, error, connectivity
print(result.isReachable, result.statusCode as Any, result.error as Any, result.connectivity)
NetworkDetector.shared.checkNetworkReachability { isReachable, statusCode, error in print(isReachable) }
// --- end of snippet ---

try await Task.sleep(nanoseconds: 500_000_000)
monitor.cancel()
NotificationCenter.default.removeObserver(observer)
print("snippet OK")
