import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

let options: ControlOptions
do {
    options = try ControlOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    emit("reachctl: \(error)\nTry 'reachctl --help'.\n", to: .error)
    ProcessSetup.exit(ExitCode.usage)
}

let client = ReachabilityClient(socketPath: options.socketPath)
switch options.command {
case .help:
    printLine(ControlOptions.usage)
    ProcessSetup.exit(ExitCode.success)
case .version:
    printLine("reachctl \(ReachdVersion.string)")
    ProcessSetup.exit(ExitCode.success)
case .status(let json, let verbose):
    await runStatus(client: client, json: json, verbose: verbose)
case .monitor(let json, let after, let statusOnly, let changes):
    await runMonitor(client: client, json: json, after: after, statusOnly: statusOnly, changes: changes)
case .wait(let timeout, let internet, let interface, let quiet, let stable, let family, let quality):
    await runWait(client: client, timeout: timeout, internet: internet, interface: interface, quiet: quiet, stable: stable,
                  family: family, quality: quality)
case .check(let host, let port, let json, let watch):
    await runCheck(client: client, host: host, port: port, json: json, watch: watch)
case .probe(let json):
    await runProbe(client: client, json: json)
case .simulate(let command):
    runSimulate(client: client, command: command)
}
