import Glibc
import ReachabilitySystem
import Testing

@Suite struct FileSystemTests {
    /// The new bytes, the mode asked for, and nothing left beside the file: not the temporary
    /// file, not the old one.
    @Test func writeAtomicallyReplacesTheFileAndLeavesNothingElse() throws {
        let directory = try scratchDirectory("fs")
        defer { removeScratch(directory) }
        let path = directory + "/state.json"
        try FileSystem.writeAtomically(path: path, bytes: Array("old\n".utf8), mode: 0o600)
        try FileSystem.writeAtomically(path: path, bytes: Array("new\n".utf8), mode: 0o644)
        #expect(try FileDescriptor.open(path).readToEnd() == Array("new\n".utf8))
        let status = try #require(try FileSystem.status(of: path))
        #expect(status.kind == .regularFile)
        #expect(status.permissions == 0o644)
        #expect(status.ownerID == ProcessSetup.effectiveUserID)
        #expect(try FileSystem.entries(of: directory) == ["state.json"])
    }

    /// A directory that is not there: the error of mkstemp, naming the template.
    @Test func writeAtomicallyIntoAMissingDirectoryNamesTheStep() throws {
        let directory = try scratchDirectory("fs")
        defer { removeScratch(directory) }
        #expect {
            try FileSystem.writeAtomically(path: directory + "/missing/x.prom", bytes: [1], mode: 0o644)
        } throws: { error in
            guard let error = error as? Errno else { return false }
            return error == .noSuchFile && error.call == "mkstemp" && error.path == directory + "/missing/.x.prom.XXXXXX"
        }
    }

    /// lstat sees the link, stat what it points to; a dangling link followed is nothing.
    @Test func statusEntriesAndLinks() throws {
        let directory = try scratchDirectory("fs")
        defer { removeScratch(directory) }
        try FileSystem.writeAtomically(path: directory + "/script", bytes: Array("#!/bin/sh\n".utf8), mode: 0o4755)
        #expect(symlink("/dev/null", directory + "/masked") == 0)
        #expect(symlink(directory + "/gone", directory + "/dangling") == 0)
        #expect(try FileSystem.entries(of: directory).sorted() == ["dangling", "masked", "script"])
        #expect(try FileSystem.status(of: directory + "/script")?.permissions == 0o4755)
        #expect(try FileSystem.status(of: directory + "/masked")?.kind == .symbolicLink)
        #expect(try FileSystem.status(of: directory + "/masked", followingLinks: true)?.kind == .other)
        #expect(try FileSystem.linkTarget(of: directory + "/masked") == "/dev/null")
        #expect(try FileSystem.status(of: directory + "/dangling", followingLinks: true) == nil)
        #expect(try FileSystem.status(of: directory, followingLinks: true)?.kind == .directory)
        #expect(throws: Errno.notDirectory) { try FileSystem.entries(of: directory + "/script") }
        #expect(throws: Errno.invalidArgument) { try FileSystem.linkTarget(of: directory + "/script") }
    }
}
