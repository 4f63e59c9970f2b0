#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// Replaces the file at `path` with `bytes`, atomically: a reader (or a crash) sees the old
    /// file or the new one, never part of one. The bytes go to a new file beside it,
    /// `.NAME.XXXXXX` (`FileDescriptor.createTemporary`: `mkstemp(3)`; a hidden name, which
    /// readers that pick files by suffix, such as node_exporter's `*.prom`, skip), which gets `mode`
    /// (`fchmod(2)`), is closed and renamed over `path` (`rename(2)`); on failure it is removed.
    ///
    /// - Throws: `Errno` of the step that failed: `mkstemp` with the template as its path,
    ///   `write`, `fchmod` or `close` with the temporary file's path, `rename` with the
    ///   temporary file's path.
    public static func writeAtomically(path: String, bytes: [UInt8], mode: UInt32) throws(Errno) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var temporary = ""
        let file = try FileDescriptor.createTemporary(template: directory + "/." + name + ".XXXXXX", path: &temporary)
        let fd = file.rawValue
        do {
            let written: Result<Void, Errno> = bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) in try FileDescriptor.writeAll(raw, to: fd) }
            }
            try written.get()
            try file.setPermissions(mode_t(mode))
        } catch {
            try? file.close()
            try? remove(temporary)
            throw error.with(call: error.call, path: temporary)
        }
        do {
            try file.close()
        } catch {
            try? remove(temporary)
            throw error.with(call: "close", path: temporary)
        }
        do {
            try rename(temporary, to: path)
        } catch {
            try? remove(temporary)
            throw error.with(call: "rename", path: temporary)
        }
    }
}
