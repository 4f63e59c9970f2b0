import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `DIR/reachd.prom` for node_exporter's textfile collector, replaced atomically: the text goes
/// to a temporary file in the same directory (a name the collector ignores, since it reads only
/// `*.prom`), which is then renamed over the old one, so a reader sees the old file or the new
/// one, never half of one.
struct MetricsTextfile {
    static let fileName = "reachd.prom"
    let directory: String

    var path: String { directory + "/" + Self.fileName }

    /// A failed step, with the path and the errno text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func write(_ text: String) throws {
        var template = Array((directory + "/.reachd.prom.XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard fd >= 0 else { throw Self.failure("cannot create a temporary file in \(directory)") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var ok = false
        defer { if !ok { unlink(temporary) } }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { let f = Self.failure("cannot write \(temporary)"); close(fd); throw f }
            written += n
        }
        // mkstemp makes 0600; the collector may run as another user.
        _ = fchmod(fd, 0o644)
        guard close(fd) == 0 else { throw Self.failure("cannot write \(temporary)") }
        guard rename(temporary, path) == 0 else { throw Self.failure("cannot rename \(temporary) to \(path)") }
        ok = true
    }

    private static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
