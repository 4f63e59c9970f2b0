import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
import Synchronization

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
    private var inotify: Inotify?
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
        source?.cancel()
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
            // The source's cancel handler holds the instance until the source lets go of it.
            source?.cancel()
            source = nil
            inotify = nil
        }
    }

    /// Waits until every read asked so far is done (tests).
    func settle() { queue.sync {} }

    // MARK: On `queue`

    private func watchDirectory() {
        guard !watched else { return }
        if inotify == nil {
            do throws(Errno) {
                inotify = try Inotify()
            } catch {
                log.warning("DHCP leases: \(error); leases are read on address changes only")
                watched = true
                return
            }
        }
        guard let inotify,
              (try? inotify.addWatch(path: directory, mask: [.closeWrite, .movedTo, .movedFrom, .delete])) != nil else {
            // No networkd (or not yet): the next refresh tries again.
            return
        }
        watched = true
        let source = DispatchSource.makeReadSource(fileDescriptor: inotify.rawValue, queue: queue)
        source.setEventHandler { [weak self] in self?.drainEvents() }
        source.setCancelHandler { withExtendedLifetime(inotify) {} }
        self.source = source
        source.resume()
    }

    /// Reads the inotify events and the leases they name (file names that are interface indexes).
    private func drainEvents() {
        guard let inotify else { return }
        var changed = Set<Int>()
        while let events = try? inotify.readEvents(), !events.isEmpty {
            for event in events {
                // Events were lost: any link's lease may have changed.
                if event.mask.contains(.queueOverflow) { changed.formUnion(metered.keys) }
                guard let name = event.nameBytes, name.count <= 10, name.allSatisfy({ (0x30...0x39).contains($0) }),
                      let index = Int(String(decoding: name, as: UTF8.self)), index > 0 else { continue }
                changed.insert(index)
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

    /// Reads and parses the lease at `path`, at most `DHCPLease.maximumSize` bytes: a symbolic
    /// link, a FIFO, a device or a huge file is refused without waiting or reading it all.
    static func load(_ path: String) -> Loaded {
        let file: FileSystem.FilePrefix
        do throws(FileSystem.ReadFailure) {
            file = try FileSystem.readRegularFile(path, limit: DHCPLease.maximumSize)
        } catch {
            switch error {
            case .system(let failure) where failure == .noSuchFile: return .missing
            case .system(let failure): return .failed("cannot \(failure.call): \(failure.text)")
            case .notRegularFile: return .failed("not a regular file")
            }
        }
        guard !file.isTruncated else { return .failed("larger than \(DHCPLease.maximumSize) bytes, not a lease file") }
        return parse(file.bytes[...])
    }

    private static func parse(_ bytes: ArraySlice<UInt8>) -> Loaded {
        do throws(DHCPLease.ParseError) {
            return .lease(try DHCPLease.parse(bytes))
        } catch {
            return .failed(error.problem)
        }
    }
}
