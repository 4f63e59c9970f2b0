import Glibc
import ReachabilitySystem
import Testing

@Suite struct ResidentPagesTests {
    static let sample = """
    55d0c0a00000-55d0c0a40000 r--p 00000000 fe:00 123 /usr/sbin/reachd
    Size:                256 kB
    Rss:                 192 kB
    Anonymous:             0 kB
    55d0c0a40000-55d0c1000000 r-xp 00040000 fe:00 123 /usr/sbin/reachd
    Rss:                4096 kB
    Anonymous:             0 kB
    55d0c1000000-55d0c1050000 r--p 00600000 fe:00 123 /usr/sbin/reachd
    Rss:                 320 kB
    Anonymous:           320 kB
    55d0c1050000-55d0c1060000 rw-p 00650000 fe:00 123 /usr/sbin/reachd
    Rss:                  64 kB
    Anonymous:             8 kB
    55d0c2000000-55d0c2100000 rw-p 00000000 00:00 0                          [heap]
    Rss:                 100 kB
    Anonymous:           100 kB
    7f0000000000-7f0000010000 r--s 00000000 fe:00 9 /tmp/shared file
    Rss:                  64 kB
    Anonymous:             0 kB
    7f0000010000-7f0000020000 r--p 00000000 fe:00 10 /opt/a dir/lib.so
    Rss:                  16 kB
    Anonymous:             0 kB
    VmFlags: rd mr mw me sd
    7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                          [vdso]
    Rss:                   8 kB
    Anonymous:             0 kB
    """

    @Test func parsesRangesPermissionsPathsAndSizes() {
        let mappings = ResidentPages.mappings(smaps: Self.sample)
        #expect(mappings.count == 8)
        let first = mappings[0]
        #expect(first.start == 0x55d0c0a00000 && first.end == 0x55d0c0a40000 && first.permissions == "r--p")
        #expect(first.path == "/usr/sbin/reachd" && first.residentKiB == 192 && first.anonymousKiB == 0)
        #expect(mappings[2].anonymousKiB == 320)
        #expect(mappings[4].path == "[heap]")
        #expect(mappings[6].path == "/opt/a dir/lib.so" && mappings[6].residentKiB == 16)
    }

    /// Code and constants are released; the relocated part (read-only now, but written at start),
    /// data, the heap, shared mappings and the kernel's vDSO are not.
    @Test func onlyCleanPrivateReadOnlyFileMappingsAreReleasable() {
        let releasable = ResidentPages.mappings(smaps: Self.sample).map(\.isCleanReadOnlyFile)
        #expect(releasable == [true, true, false, false, false, false, true, false])
    }

    /// A file mapped privately and read is dropped from the resident set and reads the same
    /// afterwards; a private mapping that was written (copied on write) and then made read-only,
    /// as the loader does with relocations, keeps its pages and what was written to them.
    @Test func releasesReadPagesAndKeepsWrittenOnes() throws {
        let pageCount = 32
        let length = pageCount * Int(sysconf(Int32(_SC_PAGESIZE)))
        var path = "/tmp/reachd-resident-XXXXXX"
        let file = try FileDescriptor.createTemporary(template: path, path: &path)
        defer { unlink(path) }
        let content = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try content.withUnsafeBytes { try file.writeAll($0) }
        let descriptor = file.release()
        defer { close(descriptor) }

        let failed = UnsafeMutableRawPointer(bitPattern: -1)
        let read = try #require(mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0).flatMap { $0 == failed ? nil : $0 })
        defer { munmap(read, length) }
        let written = try #require(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0).flatMap { $0 == failed ? nil : $0 })
        defer { munmap(written, length) }
        // One byte of each page read, so that every page is resident.
        for page in 0..<pageCount {
            let offset = page * length / pageCount
            #expect(read.load(fromByteOffset: offset, as: UInt8.self) == content[offset])
        }
        for page in 0..<pageCount { written.storeBytes(of: 0xAB, toByteOffset: page * length / pageCount, as: UInt8.self) }
        #expect(mprotect(written, length, PROT_READ) == 0)

        func mapping(at address: UnsafeMutableRawPointer) throws -> ResidentPages.Mapping? {
            try ResidentPages.ownMappings().first { $0.start == UInt(bitPattern: address) }
        }
        let readBefore = try #require(try mapping(at: read))
        let writtenBefore = try #require(try mapping(at: written))
        #expect(readBefore.isCleanReadOnlyFile && readBefore.residentKiB >= length / 1024)
        #expect(!writtenBefore.isCleanReadOnlyFile && writtenBefore.anonymousKiB >= length / 1024)

        let released = try ResidentPages.releaseCleanReadOnlyFilePages()
        #expect(released >= length / 1024)
        #expect(try mapping(at: read)?.residentKiB == 0)
        #expect(try mapping(at: written)?.residentKiB == writtenBefore.residentKiB)

        #expect(Array(UnsafeRawBufferPointer(start: read, count: length)) == content)
        for page in 0..<pageCount {
            #expect(written.load(fromByteOffset: page * length / pageCount, as: UInt8.self) == 0xAB)
        }
    }
}
