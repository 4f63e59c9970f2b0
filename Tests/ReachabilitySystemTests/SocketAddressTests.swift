import Glibc
import ReachabilitySystem
import Testing

@Suite struct SocketAddressTests {
    @Test(arguments: ["127.0.0.1", "192.0.2.1", "0.0.0.0", "255.255.255.255"])
    func ipv4TextRoundTrips(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.family == .ipv4)
        #expect(address.bytes.count == 4)
        #expect(address.description == text)
        #expect(IPAddress(bytes: address.bytes) == address)
    }

    @Test(arguments: [("2001:db8::1", "2001:db8::1"), ("2001:DB8:0:0::1", "2001:db8::1"), ("::", "::"),
                      ("::1", "::1"), ("::ffff:192.0.2.1", "::ffff:192.0.2.1"), ("fe80::1:2:3:4", "fe80::1:2:3:4")])
    func ipv6TextRoundTripsToTheCanonicalForm(_ text: String, _ canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.family == .ipv6)
        #expect(address.bytes.count == 16)
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: ["", "example.com", "1.2.3", "256.1.1.1", "1.2.3.4/24", "fe80::1%eth0", "::g", " 1.2.3.4"])
    func notAnAddress(_ text: String) {
        #expect(IPAddress(text) == nil)
        #expect(SocketAddress(ip: text, port: 80) == nil)
    }

    /// The text straight from the bytes (what the netlink decoder uses) is the description's.
    @Test(arguments: ["192.0.2.1", "0.0.0.0", "2001:db8::1", "::ffff:192.0.2.1", "fe80::1:2:3:4", "::"])
    func textFromTheBytesIsTheDescription(_ text: String) throws {
        let address = try #require(IPAddress(text))
        let family = address.family == .ipv4 ? AF_INET : AF_INET6
        let written = address.bytes.withUnsafeBytes { raw in raw.baseAddress.flatMap { IPAddress.text(family: family, bytes: $0) } }
        #expect(written == address.description && written == text)
        let other = address.bytes.withUnsafeBytes { raw in raw.baseAddress.flatMap { IPAddress.text(family: AF_UNIX, bytes: $0) } }
        #expect(other == nil)
    }

    @Test func unspecified() throws {
        #expect(try #require(IPAddress("0.0.0.0")).isUnspecified)
        #expect(try #require(IPAddress("::")).isUnspecified)
        #expect(!(try #require(IPAddress("::1")).isUnspecified))
    }

    @Test(arguments: [("192.0.2.1", UInt16(80), "192.0.2.1:80"), ("2001:db8::1", UInt16(8080), "[2001:db8::1]:8080")])
    func ipSocketAddressRoundTripsThroughSockaddr(_ text: String, _ port: UInt16, _ description: String) throws {
        let address = try #require(SocketAddress(ip: text, port: port))
        #expect(address.description == description)
        let back = address.withSockaddr { pointer, length -> SocketAddress? in
            #expect(Int(length) == (address.family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size))
            #expect(CInt(pointer.pointee.sa_family) == address.family)
            return SocketAddress(pointer)
        }
        #expect(back == address)
    }

    @Test func portIsInNetworkOrder() throws {
        let address = try #require(SocketAddress(ip: "127.0.0.1", port: 0x1234))
        let port = address.withSockaddr { pointer, _ in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        #expect(port == UInt16(0x1234).bigEndian)
    }

    @Test func unixSocketAddressRoundTripsThroughSockaddr() throws {
        let address = try SocketAddress.unix("/run/reachd/io.reachd.Reachability")
        #expect(address.family == AF_UNIX)
        #expect(address.path == "/run/reachd/io.reachd.Reachability")
        let back = address.withSockaddr { pointer, length -> SocketAddress? in
            #expect(Int(length) == MemoryLayout<sockaddr_un>.size)
            return SocketAddress(pointer)
        }
        #expect(back == address)
    }

    @Test func abstractUnixNameRoundTripsWithItsLength() throws {
        let address = try SocketAddress.abstractUnix("reachd-test")
        #expect(address.description == "@reachd-test")
        #expect(address.path == nil)
        let back = address.withSockaddr { pointer, length -> SocketAddress? in
            // The family, a NUL, the name: no terminator.
            #expect(Int(length) == MemoryLayout<sa_family_t>.size + 1 + "reachd-test".utf8.count)
            return SocketAddress(pointer, length: length)
        }
        #expect(back == address)
    }

    @Test func theLongestUnixPathFitsAndOneByteMoreIsAClearError() throws {
        #expect(SocketAddress.maxUnixPathLength == 107)
        let longest = "/" + String(repeating: "a", count: 106)
        let address = try SocketAddress.unix(longest)
        #expect(address.withSockaddr { pointer, _ in SocketAddress(pointer) }?.path == longest)

        let tooLong = longest + "b"
        do {
            _ = try SocketAddress.unix(tooLong)
            Issue.record("accepted a path sun_path cannot hold")
        } catch {
            #expect(error == .nameTooLong)
            #expect(error.path == tooLong)
            #expect(error.description == "socket path longer than 107 bytes \(tooLong): File name too long")
        }
    }

    @Test func aUnixSocketListensAndConnectsThroughTheLayer() throws {
        let directory = "/tmp/reachd-system-test-\(getpid())"
        mkdir(directory, 0o700)
        defer { rmdir(directory) }
        let path = directory + "/s"
        let address = try SocketAddress.unix(path)
        let listener = try FileDescriptor.listening(at: address, backlog: 4)
        defer { try? FileSystem.remove(path) }
        #expect(try FileSystem.status(of: path)?.kind == .socket)
        let client = try FileDescriptor.connected(to: address)
        let server = try listener.accept()
        let peerPID = server.peerCredentials()?.pid
        #expect(peerPID == getpid())
        try client.writeAll("ping")
        var buffer = [UInt8](repeating: 0, count: 16)
        var received = 0
        // The server end is non-blocking: wait for the bytes.
        while received == 0 {
            switch try server.poll(for: .readable, timeoutMilliseconds: 2000) {
            case .ready: received = try receive(from: server, into: &buffer)
            case .pending, .cancelled: Issue.record("no data"); return
            }
        }
        #expect(String(decoding: buffer[0..<received], as: UTF8.self) == "ping")
        do {
            let count = try receive(from: server, into: &buffer)
            Issue.record("received \(count) bytes from an empty socket")
        } catch {
            #expect(error as? Errno == .wouldBlock)
        }
    }

    private func receive(from socket: borrowing FileDescriptor, into buffer: inout [UInt8]) throws -> Int {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count, alignment: 1)
        defer { raw.deallocate() }
        let count = try socket.receive(into: raw)
        buffer.replaceSubrange(0..<count, with: raw[0..<count])
        return count
    }

    @Test func connectingWhereNobodyListensIsNoSuchFile() throws {
        do {
            _ = try FileDescriptor.connected(to: .unix("/nonexistent/reachd.sock"))
            Issue.record("connected")
        } catch {
            #expect(error == .noSuchFile)
            #expect(error.description == "connect /nonexistent/reachd.sock: No such file or directory")
        }
    }
}
