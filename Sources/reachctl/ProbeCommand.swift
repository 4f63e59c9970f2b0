import Foundation
import ReachabilityClient
import ReachabilityCore

// PLACE FOR THE PROBE HELPER: `reachctl probe [--json]`.
// This minimal version calls `io.reachd.Reachability.Probe` and prints the probe; replace the
// human form as needed.
func runProbe(client: ReachabilityClient, json: Bool) async -> Never {
    do {
        let reply = try await client.call(method: "\(ReachabilityClient.interface).Probe")
        let probe = try reply.decode(Probe.self, key: "probe")
        if json {
            printLine(jsonLine(probe))
        } else {
            let status = probe.httpStatus.map { " (HTTP \($0))" } ?? ""
            let rtt = probe.rttMs.map { " in \(String(format: "%.1f", $0)) ms" } ?? ""
            printLine("\(probe.result.rawValue)\(status)\(rtt) · \(probe.url)\(probe.error.map { " · \($0)" } ?? "")")
        }
        exit(ExitCode.success)
    } catch {
        exitOnError(error)
    }
}
