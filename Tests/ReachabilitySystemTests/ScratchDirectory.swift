import Glibc
import ReachabilitySystem
import Testing

/// A fresh directory under /tmp (`mkdtemp(3)`), named `/tmp/rch-NAME-XXXXXX`.
func scratchDirectory(_ name: String) throws -> String {
    var template = Array("/tmp/rch-\(name)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
    return String(cString: try #require(made))
}

/// Removes a scratch directory, the files in it and its empty subdirectories.
func removeScratch(_ directory: String) {
    for name in (try? FileSystem.entries(of: directory)) ?? [] where rmdir(directory + "/" + name) != 0 {
        try? FileSystem.remove(directory + "/" + name)
    }
    rmdir(directory)
}
