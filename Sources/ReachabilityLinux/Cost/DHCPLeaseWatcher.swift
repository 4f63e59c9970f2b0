import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads systemd-networkd's DHCPv4 lease of each link (`DIRECTORY/IFINDEX`) and tells whether it
/// asks for metered use (`ANDROID_METERED` in option 43), on a queue of its own: the monitor's
/// queue never waits for a file.
///
/// A link's lease is read when the monitor asks (its addresses or routes changed, or everything
/// after a start or a re-read) and when the file changes (inotify on the directory: networkd
/// writes a temporary file and renames it). A missing file is no lease (not metered); a file
/// that cannot be read or parsed is logged once, and the link keeps what its lease said before
/// until a readable one comes. `onChange` is called, on the watcher's queue, only when a link's
/// answer changes.
final class DHCPLeaseWatcher: @unchecked Sendable {
    let directory: String
    private let queue = DispatchQueue(label: "reachd.leases")
    private let log: LogSink
    private let onChange: @Sendable (_ index: Int, _ metered: Bool) -> Void
    /// Indexes asked for and not read yet: a burst of address and route changes (a router
    /// announcing in a loop) costs one read per link, not one per message.
    private let pending = Mutex<Set<Int>>([])

    // Confined to `queue`.
    private var inotify: Int32 = -1
    private var source: DispatchSourceRead?
    private var watched = false
    private var stopped = false
    /// The last answer given per link index.
    private var metered: [Int: Bool] = [:]
    /// The last failure logged per link index, so that a broken file is one log line.
    private var failures: [Int: String] = [:]

    init(directory: String, log: LogSink, onChange: @escaping @Sendable (_ index: Int, _ metered: Bool) -> Void) {
        self.directory = directory
        self.log = log
        self.onChange = onChange
    }

    deinit {
        if let source { source.cancel() } else if inotify >= 0 { close(inotify) }
    }

    /// Reads the leases of `indexes` (again), after the directory's watch is set up when it can
    /// be (a directory that does not exist yet is tried again at the next call).
    func refresh(_ indexes: some Sequence<Int>) {
        let wasIdle = pending.withLock { pending in
            let idle = pending.isEmpty
            pending.formUnion(indexes)
            return idle
        }
        guard wasIdle else { return }
        queue.async { [self] in
            let indexes = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            guard !stopped else { return }
            watchDirectory()
            for index in indexes.sorted() { read(index) }
        }
    }

    /// The link is gone: its answer is forgotten (a new link with its index starts afresh).
    func forget(_ index: Int) {
        queue.async { [self] in
            metered[index] = nil
            failures[index] = nil
        }
    }

    /// Stops watching; nothing is reported after it.
    func stop() {
        queue.sync {
            stopped = true
            if let source { source.cancel() } else if inotify >= 0 { close(inotify) }
            source = nil
            inotify = -1
        }
    }

    /// Waits until every read asked so far is done (tests).
    func settle() { queue.sync {} }

    // MARK: On `queue`

    private func watchDirectory() {
        guard !watched else { return }
        if inotify < 0 {
            inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard inotify >= 0 else {
                log.warning("DHCP leases: inotify_init1 failed: \(Errno.current("inotify_init1").text); leases are read on address changes only")
                watched = true
                return
            }
        }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            // No networkd (or not yet): the next refresh tries again.
            return
        }
        watched = true
        let fd = inotify
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.drainEvents() }
        source.setCancelHandler { close(fd) }
        self.source = source
        source.resume()
    }

    /// Reads the inotify events and the leases they name (file names that are interface indexes).
    private func drainEvents() {
        var changed = Set<Int>()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameStart = offset + header, nameEnd = min(nameStart + length, count)
                let name = buffer[nameStart..<nameEnd].prefix { $0 != 0 }
                if !name.isEmpty, name.count <= 10, name.allSatisfy({ (0x30...0x39).contains($0) }),
                   let index = Int(String(decoding: name, as: UTF8.self)), index > 0 {
                    changed.insert(index)
                }
                offset = nameEnd
            }
        }
        guard !stopped else { return }
        for index in changed.sorted() { read(index) }
    }

    private func read(_ index: Int) {
        let path = "\(directory)/\(index)"
        let answer: Bool
        switch Self.load(path) {
        case .missing:
            answer = false
            failures[index] = nil
        case .lease(let lease):
            answer = lease.isAndroidMetered
            failures[index] = nil
        case .failed(let problem):
            if failures[index] != problem {
                failures[index] = problem
                log.warning("DHCP lease \(path): \(problem); its metered hint is not used")
            }
            return
        }
        guard metered[index] != answer else { return }
        let before = metered[index]
        metered[index] = answer
        // A link without a lease that never had one reports nothing new.
        if before == nil && !answer { return }
        onChange(index, answer)
    }

    enum Loaded {
        case missing
        case lease(DHCPLease)
        case failed(String)
    }

    /// Reads and parses the lease at `path`, at most `DHCPLease.maximumSize` bytes.
    static func load(_ path: String) -> Loaded {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let error = Errno.current("open", path: path)
            return error.rawValue == ENOENT ? .missing : .failed("cannot open: \(error.text)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failed("cannot stat: \(Errno.current("fstat").text)") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failed("not a regular file") }
        let limit = DHCPLease.maximumSize + 1
        var buffer = [UInt8](repeating: 0, count: limit)
        var total = 0
        while total < limit {
            let offset = total
            let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in
                    try retryingOnInterrupt("read", path: path) { Glibc.read(fd, raw.baseAddress.map { $0 + offset }, limit - offset) }
                }
            }
            switch received {
            case .success(let count):
                if count == 0 { return parse(buffer.prefix(total)) }
                total += count
            case .failure(let error):
                return .failed("cannot read: \(error.text)")
            }
        }
        return .failed("larger than \(DHCPLease.maximumSize) bytes, not a lease file")
    }

    private static func parse(_ bytes: ArraySlice<UInt8>) -> Loaded {
        do throws(DHCPLease.ParseError) {
            return .lease(try DHCPLease.parse(bytes))
        } catch {
            return .failed(error.problem)
        }
    }
}
