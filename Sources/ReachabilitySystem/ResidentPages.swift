#if canImport(Glibc)
import Glibc
#endif

/// The process's own resident memory, as the kernel reports it in `/proc/self/smaps`.
public enum ResidentPages {
    /// One mapping of `/proc/self/smaps`: its range, permissions, file and how much of it is
    /// resident and private anonymous (copied on write).
    public struct Mapping: Sendable, Equatable {
        public var start: UInt
        public var end: UInt
        /// As `maps` prints them: `r-xp`, `r--p`, `rw-p`, …
        public var permissions: String
        /// The mapped file, a pseudo-name like `[heap]`, or empty for anonymous memory.
        public var path: String
        public var residentKiB: Int
        public var anonymousKiB: Int

        /// A private mapping of a file that cannot be written and never was (no page of it was
        /// copied on write): dropping its pages loses nothing, since a later access maps the
        /// same bytes of the file again. The relocated part of a program (`PT_GNU_RELRO`) is
        /// read-only too, but written at start, so it has anonymous pages and is not one.
        public var isCleanReadOnlyFile: Bool {
            let flags = Array(permissions.utf8)
            return flags.count == 4 && flags[0] == UInt8(ascii: "r") && flags[1] == UInt8(ascii: "-")
                && flags[3] == UInt8(ascii: "p") && path.hasPrefix("/") && anonymousKiB == 0
        }
    }

    /// Parses the text of `/proc/PID/smaps`; lines it does not know are skipped.
    public static func mappings(smaps text: String) -> [Mapping] {
        var result: [Mapping] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if let dash = first.firstIndex(of: "-"), fields.count >= 5,
               let start = UInt(first[first.startIndex..<dash], radix: 16),
               let end = UInt(first[first.index(after: dash)...], radix: 16) {
                // A path may contain spaces: it is everything after the inode.
                let path = fields.count > 5 ? fields[5...].joined(separator: " ") : ""
                result.append(Mapping(start: start, end: end, permissions: String(fields[1]), path: path,
                                      residentKiB: 0, anonymousKiB: 0))
            } else if fields.count >= 2, let value = Int(fields[1]), !result.isEmpty {
                switch first {
                case "Rss:": result[result.count - 1].residentKiB = value
                case "Anonymous:": result[result.count - 1].anonymousKiB = value
                default: break
                }
            }
        }
        return result
    }

    /// This process's mappings (`/proc/self/smaps`).
    public static func ownMappings() throws(Errno) -> [Mapping] {
        let file = try FileDescriptor.open("/proc/self/smaps")
        let bytes = try file.readToEnd()
        try file.close()
        return mappings(smaps: String(decoding: bytes, as: UTF8.self))
    }

    /// Unmaps the resident pages of every clean read-only file mapping (`madvise(2)` with
    /// `MADV_DONTNEED`): the code and constants of the program and its libraries that start-up
    /// touched. They stay in the page cache; what runs later maps them again on first touch.
    /// Returns the KiB that were resident in those mappings.
    @discardableResult
    public static func releaseCleanReadOnlyFilePages() throws(Errno) -> Int {
        var released = 0
        for mapping in try ownMappings() where mapping.isCleanReadOnlyFile && mapping.residentKiB > 0 {
            guard let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(address, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 {
                released += mapping.residentKiB
            }
        }
        return released
    }
}
