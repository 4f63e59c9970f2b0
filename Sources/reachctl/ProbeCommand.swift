import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

/// `reachctl probe [--json]`: asks reachd to run the connectivity check now (a check already
/// running is waited for) and prints its verdict. Exit 0 with a verdict, whatever it is;
/// 1 when the check is disabled (`[Connectivity] Enabled=no`); 69 when reachd does not answer.
func runProbe(client: ReachabilityClient, json: Bool) async -> Never {
    do {
        let reply = try await client.call(method: "\(Varlink.reachabilityInterface).Probe")
        let probe = try reply.decode(Probe.self, key: "probe")
        printLine(json ? jsonLine(probe) : Style().probe(probe))
        ProcessSetup.exit(ExitCode.success)
    } catch ReachabilityClientError.remote(let error) where error.name == VarlinkError.probeDisabled.name {
        fail("the connectivity check is disabled ([Connectivity] Enabled=no)")
    } catch {
        exitOnError(error)
    }
}

extension Style {
    /// The probe's summary with the verdict coloured: full green, portal/limited yellow, none red.
    func probe(_ probe: Probe) -> String {
        let line = safe(probe.summary)
        let verdict = "internet: \(probe.result.rawValue)"
        guard enabled, line.hasPrefix(verdict) else { return line }
        let colour: String
        switch probe.result {
        case .full: colour = "32"
        case .portal, .limited: colour = "33"
        case .none: colour = "31"
        case .unknown: return line
        }
        return "internet: " + paint(probe.result.rawValue, colour) + line.dropFirst(verdict.count)
    }
}
