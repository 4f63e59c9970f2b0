// An app as its users write one: it follows the network with `PathMonitor` where no reachd
// runs (the in-process fallback, with its ModemManager source and connectivity check on, as by
// default), and prints `path: NAME …` (the path's interfaces) for each update. It ends once a
// path shows the interface `--until` names. With `--sink` it gives the library a log sink that
// prints `log: LEVEL: MESSAGE` to stdout; without, the library must write nothing to stderr
// (QuietLibraryTests).
//
//   InProcessApp --until mark0 [--sink]
import Dispatch
import Foundation
import Reachability

/// Lines from the monitor's queue and the app's queue, never interleaved.
let output = NSLock()

func say(_ line: String) {
    output.withLock {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

var arguments = CommandLine.arguments.dropFirst()
var until: String?
var giveSink = false
while let argument = arguments.popFirst() {
    switch argument {
    case "--until": until = arguments.popFirst()
    case "--sink": giveSink = true
    default:
        FileHandle.standardError.write(Data("usage: InProcessApp --until NAME [--sink]\n".utf8))
        exit(2)
    }
}
guard let until else {
    FileHandle.standardError.write(Data("usage: InProcessApp --until NAME [--sink]\n".utf8))
    exit(2)
}

// No daemon at this path: `.auto` falls back to the in-process monitor at once.
let monitor = PathMonitor(source: .auto, socketPath: "/nonexistent/reachd-in-process-app/io.reachd.Reachability")
if giveSink {
    monitor.inProcessLog = LogSink(threshold: .debug) { level, message in say("log: \(level.rawValue): \(message)") }
}
monitor.pathUpdateHandler = { path in
    let names = path.availableInterfaces.map(\.name)
    say((["path:"] + names).joined(separator: " "))
    if names.contains(until) { exit(0) }
}
monitor.start(queue: DispatchQueue(label: "in-process-app"))
dispatchMain()
