import FoundationEssentials
import ReachabilitySystem

/// `DIR/reachd.prom` for node_exporter's textfile collector, replaced atomically: the text goes
/// to a temporary file in the same directory (a name the collector ignores, since it reads only
/// `*.prom`), which is then renamed over the old one, so a reader sees the old file or the new
/// one, never half of one.
struct MetricsTextfile {
    static let fileName = "reachd.prom"
    let directory: String

    var path: String { directory + "/" + Self.fileName }

    /// A failed step, with the path and the errno.
    struct Failure: Error, CustomStringConvertible {
        let what: String
        let errno: Errno
        var description: String { "\(what): \(errno.text)" }
    }

    func write(_ text: String) throws(Failure) {
        var temporary = ""
        let file: FileDescriptor
        do {
            file = try FileDescriptor.createTemporary(template: directory + "/.reachd.prom.XXXXXX", path: &temporary)
        } catch {
            throw Failure(what: "cannot create a temporary file in \(directory)", errno: error)
        }
        var ok = false
        defer { if !ok { try? FileSystem.remove(temporary) } }
        do {
            try file.writeAll(text)
            // mkstemp makes 0600; the collector may run as another user.
            try? file.setPermissions(0o644)
            try file.close()
        } catch {
            throw Failure(what: "cannot write \(temporary)", errno: error)
        }
        do {
            try FileSystem.rename(temporary, to: path)
        } catch {
            throw Failure(what: "cannot rename \(temporary) to \(path)", errno: error)
        }
        ok = true
    }
}
