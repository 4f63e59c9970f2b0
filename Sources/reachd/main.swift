import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilityLinux
import ReachabilitySystem

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    emit("reachd: \(error)\nTry 'reachd --help'.\n", to: .error)
    ProcessSetup.exit(2)
}
if options.showHelp { emit(DaemonOptions.usage + "\n"); ProcessSetup.exit(0) }
if options.showVersion { emit("reachd \(ReachdVersion.string)\n"); ProcessSetup.exit(0) }

let log = LogSink.standardError(threshold: options.logLevel ?? .info)
let configuration: ReachdConfiguration
do {
    configuration = try ReachdConfiguration.load(configPath: options.configPath)
} catch {
    log.error("\(error)")
    ProcessSetup.exit(options.checkConfig ? 1 : 78)   // EX_CONFIG
}
if options.checkConfig {
    emit("reachd: configuration OK\n")
    ProcessSetup.exit(0)
}

let daemon = Daemon(options: options, configuration: configuration, log: log)
do {
    try daemon.start()
} catch {
    log.error("\(error)")
    ProcessSetup.exit(1)
}
dispatchMain()
