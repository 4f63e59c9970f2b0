import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// The progress file (`DispatcherProgress`) in the state directory, replaced atomically.
struct ProgressFile {
    let directory: String
    var path: String { directory + "/progress.json" }

    /// The saved progress; nil when there is none or it cannot be used (logged).
    func load(log: LogSink) -> DispatcherProgress? {
        let bytes: [UInt8]
        do {
            bytes = try FileDescriptor.open(path).readToEnd()
        } catch {
            if error != .noSuchFile { log.warning("cannot read \(path): \(error.text); starting afresh") }
            return nil
        }
        do {
            return try WireJSON.decoder().decode(DispatcherProgress.self, from: Data(bytes))
        } catch {
            log.warning("cannot use \(path) (\(error)); starting afresh")
            return nil
        }
    }

    /// Writes `progress` (`FileSystem.writeAtomically`: a crash leaves the old or the new one).
    func save(_ progress: DispatcherProgress) throws {
        let data = try WireJSON.encoder().encode(progress)
        try FileSystem.writeAtomically(path: path, bytes: Array(data), mode: 0o644)
    }
}
