import Foundation
import ReachabilityClient
import ReachabilityCore

// PLACE FOR THE HOSTCHECK HELPER: `reachctl check HOST [--port N] [--json] [--watch]`.
// This minimal version calls `io.reachd.Reachability.Check` and prints the `result` object as
// JSON; replace it with the human output, `--watch`, and exit 0 reachable / 1 not.
func runCheck(client: ReachabilityClient, host: String, port: Int?, json: Bool, watch: Bool) async -> Never {
    var parameters: [String: JSONValue] = ["host": .string(host)]
    if let port { parameters["port"] = .int(port) }
    do {
        let reply = try await client.call(method: "\(ReachabilityClient.interface).Check", parameters: parameters)
        let result = reply.parameters["result"] ?? .null
        printLine(jsonLine(result))
        exit(result.objectValue?["reachable"]?.boolValue == true ? ExitCode.success : ExitCode.failure)
    } catch {
        exitOnError(error)
    }
}
