import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to a file descriptor (Swift 6 mode cannot use `stdout`).
func emit(_ text: String, to fd: Int32 = 1) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    emit("reachd: \(error)\nTry 'reachd --help'.\n", to: 2)
    exit(2)
}
if options.showHelp { emit(DaemonOptions.usage + "\n"); exit(0) }
if options.showVersion { emit("reachd \(ReachdVersion.string)\n"); exit(0) }

let log = LogSink.standardError(threshold: options.logLevel ?? .info)
let configuration: ReachdConfiguration
do {
    configuration = try ReachdConfiguration.load(configPath: options.configPath)
} catch {
    log.error("\(error)")
    exit(options.checkConfig ? 1 : 78)   // EX_CONFIG
}
if options.checkConfig {
    emit("reachd: configuration OK\n")
    exit(0)
}

let daemon = Daemon(options: options, configuration: configuration, log: log)
do {
    try daemon.start()
} catch {
    log.error("\(error)")
    exit(1)
}
dispatchMain()
