#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// The kinds of socket the layer makes.
    public enum SocketType: Sendable {
        /// `SOCK_STREAM`: a connection (TCP, a Unix stream).
        case stream
        /// `SOCK_DGRAM`: single messages (sd_notify's datagrams).
        case datagram

        /// `SOCK_STREAM` or `SOCK_DGRAM`, for C APIs that take the type (`sd_is_socket_unix`).
        public var rawValue: CInt {
            switch self {
            case .stream: return CInt(SOCK_STREAM.rawValue)
            case .datagram: return CInt(SOCK_DGRAM.rawValue)
            }
        }
    }

    /// A new socket of `address`'s family (`socket(2)`, `SOCK_STREAM` or `SOCK_DGRAM`, with
    /// `SOCK_CLOEXEC`, and `SOCK_NONBLOCK` when `nonBlocking`).
    public static func socket(for address: SocketAddress, _ kind: SocketType = .stream, nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var type = CInt(SOCK_CLOEXEC.rawValue) | kind.rawValue
        if nonBlocking { type |= CInt(SOCK_NONBLOCK.rawValue) }
        let fd = try checkingErrno("socket") { Glibc.socket(address.family, type, 0) }
        return FileDescriptor(adopting: fd)
    }

    /// A non-blocking stream socket bound to `address` and listening (`socket(2)`, `bind(2)`,
    /// `listen(2)`; `SO_REUSEADDR` first when `reuseAddress`). A Unix socket file must not exist.
    public static func listening(at address: SocketAddress, backlog: CInt,
                                 reuseAddress: Bool = false) throws(Errno) -> FileDescriptor {
        let fd = try socket(for: address, nonBlocking: true)
        if reuseAddress { try? fd.setOption(SO_REUSEADDR, 1) }
        try fd.bind(to: address)
        _ = try checkingErrno("listen", path: address.path) { Glibc.listen(fd.rawValue, backlog) }
        return fd
    }

    /// A blocking stream socket connected to `address` (`socket(2)`, `connect(2)`).
    public static func connected(to address: SocketAddress) throws(Errno) -> FileDescriptor {
        let fd = try socket(for: address, nonBlocking: false)
        try fd.connect(to: address)
        return fd
    }

    /// `connect(2)`. On a non-blocking socket a connection under way throws `.inProgress`.
    ///
    /// Not retried on EINTR: the connection goes on in the background, and a second call would
    /// answer EALREADY.
    public borrowing func connect(to address: SocketAddress) throws(Errno) {
        _ = try address.withSockaddr { (pointer, length) throws(Errno) in
            try checkingErrno("connect", path: address.path) { Glibc.connect(rawValue, pointer, length) }
        }
    }

    /// Takes a pending connection (`accept(2)`), made close-on-exec and non-blocking. Throws
    /// `.wouldBlock` when none is pending on a non-blocking socket.
    public borrowing func accept() throws(Errno) -> FileDescriptor {
        // accept4(2) is not visible without _GNU_SOURCE; accept + fcntl does the same.
        let fd = try retryingOnInterrupt("accept") { Glibc.accept(rawValue, nil, nil) }
        let connection = FileDescriptor(adopting: fd)
        try connection.setCloseOnExec()
        try connection.setNonBlocking()
        return connection
    }

    /// Sends some of `bytes` (`send(2)` with `MSG_NOSIGNAL`, and `MSG_DONTWAIT` when
    /// `dontWait`); returns how many went. A full socket throws `.wouldBlock`.
    @inlinable
    public borrowing func send(_ bytes: UnsafeRawBufferPointer, dontWait: Bool = false) throws(Errno) -> Int {
        let flags = CInt(MSG_NOSIGNAL) | (dontWait ? CInt(MSG_DONTWAIT) : 0)
        return try retryingOnInterrupt("send") { Glibc.send(rawValue, bytes.baseAddress, bytes.count, flags) }
    }

    /// Sends the same `bytes` to each socket in `descriptors` (`send(2)` with `MSG_DONTWAIT |
    /// MSG_NOSIGNAL`, one call each, retried on `EINTR`), skipping negative entries. `sent[i]`
    /// becomes what went to `descriptors[i]`: a byte count, or the negated `errno` (`-EAGAIN`:
    /// the socket is full); skipped entries are left as they are. The descriptors stay the
    /// caller's, who keeps them open for the call. One event to thousands of subscribers is one
    /// walk over two arrays.
    public static func send(_ bytes: UnsafeRawBufferPointer, toEach descriptors: UnsafeBufferPointer<CInt>,
                            sent: UnsafeMutableBufferPointer<Int>) {
        precondition(sent.count >= descriptors.count, "one result per descriptor")
        let flags = CInt(MSG_NOSIGNAL) | CInt(MSG_DONTWAIT)
        for index in descriptors.indices where descriptors[index] >= 0 {
            do {
                sent[index] = try retryingOnInterrupt("send") { Glibc.send(descriptors[index], bytes.baseAddress, bytes.count, flags) }
            } catch {
                sent[index] = -Int(error.rawValue)
            }
        }
    }

    /// Sends one datagram to `address` (`sendto(2)` with `MSG_NOSIGNAL`); returns how many
    /// bytes went.
    public borrowing func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress) throws(Errno) -> Int {
        try address.withSockaddr { (pointer, length) throws(Errno) in
            try retryingOnInterrupt("sendto", path: address.path) {
                sendto(rawValue, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL), pointer, length)
            }
        }
    }

    /// Receives what is there, at most `buffer.count` bytes (`recv(2)`, with `MSG_DONTWAIT`
    /// when `dontWait`); 0 when the peer has closed. Nothing there throws `.wouldBlock`.
    @inlinable
    public borrowing func receive(into buffer: UnsafeMutableRawBufferPointer, dontWait: Bool = false) throws(Errno) -> Int {
        let flags = dontWait ? CInt(MSG_DONTWAIT) : 0
        return try retryingOnInterrupt("recv") { recv(rawValue, buffer.baseAddress, buffer.count, flags) }
    }

    /// Which way `shutdown(2)` ends.
    public enum ShutdownKind: Sendable {
        /// `SHUT_WR`: no more sending; the peer reads end of file.
        case write
        /// `SHUT_RDWR`: both directions.
        case readWrite
    }

    /// Ends one or both directions (`shutdown(2)`): the peer reads end of file, and a blocked
    /// `recv` here returns. Errors (a peer already gone) are of no interest to the callers.
    public borrowing func shutdown(_ kind: ShutdownKind) {
        switch kind {
        case .write: _ = Glibc.shutdown(rawValue, CInt(SHUT_WR))
        case .readWrite: _ = Glibc.shutdown(rawValue, CInt(SHUT_RDWR))
        }
    }

    /// Sets an `int` socket option at `SOL_SOCKET` (`setsockopt(2)`).
    public borrowing func setOption(_ option: CInt, _ value: CInt) throws(Errno) {
        var value = value
        _ = try checkingErrno("setsockopt") {
            setsockopt(rawValue, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }

    /// Bounds every later blocking receive and send (`setsockopt(2)` `SO_RCVTIMEO`,
    /// `SO_SNDTIMEO`); a call over it throws `.wouldBlock`.
    public borrowing func setTimeout(seconds: Double) throws(Errno) {
        let whole = seconds.rounded(.down)
        var value = timeval(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            _ = try checkingErrno("setsockopt") {
                setsockopt(rawValue, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
            }
        }
    }

    /// The socket's pending error (`getsockopt(2)` `SO_ERROR`), cleared by reading it: how a
    /// non-blocking `connect` ended. nil when there is none.
    public borrowing func pendingError() throws(Errno) -> Errno? {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = try checkingErrno("getsockopt") { getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &value, &length) }
        return value == 0 ? nil : Errno(value, call: "connect")
    }

    /// The process at the other end of a Unix socket when it connected (`getsockopt(2)`
    /// `SO_PEERCRED`); nil when the kernel does not tell.
    public borrowing func peerCredentials() -> (pid: Int32, uid: UInt32, gid: UInt32)? {
        // `struct ucred` (pid, uid, gid) is hidden behind _GNU_SOURCE in Glibc's headers.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              Int(length) == MemoryLayout.size(ofValue: credentials) else { return nil }
        return credentials
    }

    /// The IP address of a TCP socket's peer (`getpeername(2)`); nil for other sockets or when
    /// the kernel would not tell.
    public borrowing func peerIPAddress() -> IPAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(rawValue, $0, &length) }
        }
        guard status == 0 else { return nil }
        switch CInt(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                IPAddress(bytes: Array(raw[4..<8]))   // sockaddr_in: family, port, address
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                IPAddress(bytes: Array(raw[8..<24]))  // sockaddr_in6: family, port, flowinfo, address
            }
        default:
            return nil
        }
    }

    /// What `poll(for:cancelledBy:timeoutMilliseconds:)` saw.
    public enum PollResult: Sendable, Equatable {
        /// The descriptor is ready (or has an error or hang-up to report).
        case ready
        /// The cancellation descriptor became readable.
        case cancelled
        /// Nothing yet: the time ran out, or a signal cut the wait short.
        case pending
    }

    /// Which readiness `poll` waits for.
    public enum PollEvent: Sendable {
        /// `POLLIN`.
        case readable
        /// `POLLOUT`.
        case writable
    }

    /// Waits up to `timeoutMilliseconds` (`poll(2)`) for the descriptor to become readable or
    /// writable, or `cancel` (another descriptor, such as a pipe's read end) readable. A signal
    /// ends the wait early as `.pending`, so callers keep their own deadline.
    public borrowing func poll(for event: PollEvent, cancelledBy cancel: CInt? = nil,
                               timeoutMilliseconds: CInt) throws(Errno) -> PollResult {
        try Self.poll(rawValue, for: event, cancelledBy: cancel, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// `poll(for:cancelledBy:timeoutMilliseconds:)` on a descriptor number that another value
    /// owns (a netlink socket kept open by its owner while a thread waits on it).
    ///
    /// - Parameter timeoutMilliseconds: negative: no time limit.
    /// - Throws: `Errno` from `poll(2)` (never EINTR: that is `.pending`); `.badFileDescriptor`
    ///   when `descriptor` is not open (`POLLNVAL`), so that a waiting loop ends instead of
    ///   spinning on a descriptor that will never be readable.
    public static func poll(_ descriptor: CInt, for event: PollEvent, cancelledBy cancel: CInt? = nil,
                            timeoutMilliseconds: CInt) throws(Errno) -> PollResult {
        let events: Int16
        switch event {
        case .readable: events = Int16(POLLIN)
        case .writable: events = Int16(POLLOUT)
        }
        // On the stack: the netlink reader polls once per wake-up, on the event path.
        let (ready, code, revents, cancelled) = withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { fds in
            fds[0] = pollfd(fd: descriptor, events: events, revents: 0)
            fds[1] = pollfd(fd: cancel ?? -1, events: Int16(POLLIN), revents: 0)   // -1: ignored by poll
            let ready = Glibc.poll(fds.baseAddress, 2, timeoutMilliseconds)
            return (ready, errno, fds[0].revents, fds[1].revents != 0)
        }
        if ready < 0 {
            if code == EINTR { return .pending }
            throw Errno(code, call: "poll")
        }
        // Cancellation wins over readiness: once cancelled, the descriptor may belong to no one.
        if cancelled { return .cancelled }
        if revents & Int16(POLLNVAL) != 0 { throw Errno(EBADF, call: "poll") }
        return revents != 0 ? .ready : .pending
    }

    /// Waits until the descriptor is writable or `deadline` passes (`poll(2)` for `POLLOUT`,
    /// waited again with the time left after a signal). False when the time ran out.
    public borrowing func waitUntilWritable(deadline: ContinuousClock.Instant) throws(Errno) -> Bool {
        while true {
            let milliseconds = CInt(max(0, ((deadline - .now) / .milliseconds(1)).rounded(.up)))
            switch try poll(for: .writable, timeoutMilliseconds: milliseconds) {
            case .ready, .cancelled: return true
            case .pending: if ContinuousClock.now >= deadline { return false }
            }
        }
    }

    /// Binds the socket to a local address (`bind(2)`).
    public borrowing func bind(to address: SocketAddress) throws(Errno) {
        _ = try address.withSockaddr { (pointer, length) throws(Errno) in
            try checkingErrno("bind", path: address.path) { Glibc.bind(rawValue, pointer, length) }
        }
    }

    /// Sends only through `interface` whatever the routes say (`setsockopt(2)`
    /// `SO_BINDTODEVICE`; needs CAP_NET_RAW, else EPERM).
    public borrowing func bindToDevice(_ interface: String) throws(Errno) {
        let utf8 = Array(interface.utf8CString)
        _ = try checkingErrno("setsockopt(SO_BINDTODEVICE)", path: interface) {
            setsockopt(rawValue, SOL_SOCKET, SO_BINDTODEVICE, utf8, socklen_t(utf8.count))
        }
    }

    /// Binds the socket to the interface with index `index` (`setsockopt(SO_BINDTOIFINDEX)`,
    /// Linux 5.0): by number, so that a name that is not UTF-8 is no obstacle.
    public borrowing func bindToInterface(index: Int) throws(Errno) {
        // SO_BINDTOIFINDEX from <asm-generic/socket.h>; Glibc's module does not export it.
        let option: CInt = 62
        var value = CInt(truncatingIfNeeded: index)
        _ = try checkingErrno("setsockopt(SO_BINDTOIFINDEX)") {
            setsockopt(rawValue, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }
}

extension FileDescriptor {
    /// The two ends of a pipe (`pipe(2)`, both close-on-exec).
    public struct Pipe: ~Copyable, Sendable {
        /// What is written to `writeEnd` is read here.
        public let readEnd: FileDescriptor
        public let writeEnd: FileDescriptor

        /// A new pipe (`pipe(2)`, then `FD_CLOEXEC` on both ends).
        public init() throws(Errno) {
            var ends: [CInt] = [-1, -1]
            _ = try checkingErrno("pipe") { Glibc.pipe(&ends) }
            readEnd = FileDescriptor(adopting: ends[0])
            writeEnd = FileDescriptor(adopting: ends[1])
            try? readEnd.setCloseOnExec()
            try? writeEnd.setCloseOnExec()
        }
    }
}
