import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import ReachabilitySystem

let options: DispatcherOptions
do {
    options = try DispatcherOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    emit("reachd-dispatcher: \(error)\nTry 'reachd-dispatcher --help'.\n", to: .error)
    ProcessSetup.exit(2)
}
if options.showHelp { emit(DispatcherOptions.usage + "\n"); ProcessSetup.exit(0) }
if options.showVersion { emit("reachd-dispatcher \(ReachdVersion.string)\n"); ProcessSetup.exit(0) }

let environment = ProcessInfo.processInfo.environment
let log = LogSink.standardError(threshold: options.logLevel ?? .info, program: "reachd-dispatcher", environment: environment)
let configuration: DispatcherConfiguration
do {
    configuration = try DispatcherConfiguration.load(mainFile: options.configPath ?? DispatcherConfiguration.defaultPath,
                                                     mustExist: options.configPath != nil, source: FileSystemConfigurationFiles())
} catch {
    log.error("\(error)")
    ProcessSetup.exit(options.checkConfig ? 1 : 78)   // EX_CONFIG
}
if options.checkConfig {
    emit("reachd-dispatcher: configuration OK\n")
    ProcessSetup.exit(0)
}
ProcessSetup.ignoreSIGPIPE()

// systemd's RuntimeDirectory= (several: the first).
let stateDirectory = options.stateDirectory
    ?? environment["RUNTIME_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
    ?? DispatcherOptions.defaultStateDirectory
let dispatcher = Dispatcher(options: options, configuration: configuration, stateDirectory: stateDirectory, log: log)
do {
    try dispatcher.start()
} catch {
    log.error("cannot start: \(error)")
    ProcessSetup.exit(1)
}
dispatchMain()
