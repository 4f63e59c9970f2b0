import Dispatch
import Foundation
import ReachabilityCore
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

let log = Logger(threshold: options.logLevel ?? .info)
let settings: DaemonSettings
do {
    settings = try DaemonSettings.load(configPath: options.configPath)
} catch {
    log.error("\(error)")
    ProcessSetup.exit(options.checkConfig ? 1 : 78)   // EX_CONFIG
}
if options.checkConfig {
    emit("reachd: configuration OK\n")
    ProcessSetup.exit(0)
}

let daemon = Daemon(options: options, settings: settings, log: log)
do {
    try daemon.start()
} catch {
    log.error("\(error)")
    ProcessSetup.exit(1)
}
dispatchMain()
