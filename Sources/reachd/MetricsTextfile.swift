import FoundationEssentials
import ReachabilitySystem

/// `DIR/reachd.prom` for node_exporter's textfile collector, replaced atomically
/// (`FileSystem.writeAtomically`): the text goes to a temporary file in the same directory (a
/// hidden name the collector ignores, since it reads only `*.prom`), which is then renamed over
/// the old one, so a reader sees the old file or the new one, never half of one.
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
        do {
            // 0644: the collector may run as another user.
            try FileSystem.writeAtomically(path: path, bytes: Array(text.utf8), mode: 0o644)
        } catch {
            let temporary = error.path ?? directory
            switch error.call {
            case "mkstemp": throw Failure(what: "cannot create a temporary file in \(directory)", errno: error)
            case "rename": throw Failure(what: "cannot rename \(temporary) to \(path)", errno: error)
            default: throw Failure(what: "cannot write \(temporary)", errno: error)
            }
        }
    }
}
