#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to standard error (descriptor 2) unbuffered, as `FileHandle.standardError` did:
/// the whole text, retrying after a signal or a short write; errors are dropped.
func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(written)
    }
}
