import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

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

    /// Writes `progress` (temporary file, then rename: a crash leaves the old or the new one).
    func save(_ progress: DispatcherProgress) throws {
        let data = try WireJSON.encoder().encode(progress)
        var temporary = ""
        do {
            // mkstemp(3), then close-on-exec, with no script spawned in between to inherit it.
            var name = Array((directory + "/.progress.XXXXXX").utf8CString)
            let (fd, code): (CInt, CInt) = ChildProcess.withoutSpawning {
                let fd = name.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
                let code = errno
                if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                return (fd, code)
            }
            guard fd >= 0 else { throw Errno(code, call: "mkstemp", path: directory) }
            temporary = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let file = FileDescriptor(adopting: fd)
            try file.writeAll(String(decoding: data, as: UTF8.self))
            try file.setPermissions(0o644)
            try file.close()
            try FileSystem.rename(temporary, to: path)
        } catch {
            if temporary.isEmpty { throw error }
            try? FileSystem.remove(temporary)
            throw error
        }
    }
}
