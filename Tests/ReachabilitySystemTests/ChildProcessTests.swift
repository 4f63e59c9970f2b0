import ReachabilitySystem
import Testing

@Suite struct ChildProcessTests {
    /// Exactly the environment given, stdin handed over, stdout and stderr line by line.
    @Test func runsWithTheGivenEnvironmentAndInput() {
        var lines: [(ChildProcess.Stream, String)] = []
        let outcome = ChildProcess.run("/bin/sh", arguments: ["-c", "echo \"$ONLY\"; cat; echo oops >&2; exit 3"],
                                       environment: ["ONLY=yes"], input: Array("from stdin\n".utf8), timeout: 10) { lines.append(($0, $1)) }
        #expect(outcome == .exited(3))
        #expect(lines.filter { $0.0 == .output }.map(\.1) == ["yes", "from stdin"])
        #expect(lines.filter { $0.0 == .error }.map(\.1) == ["oops"])
    }

    /// A program that is not there fails to start with the errno of posix_spawn.
    @Test func aMissingProgramFailsToStart() {
        let outcome = ChildProcess.run("/nonexistent/program", environment: [], timeout: 1) { _, _ in }
        #expect(outcome == .failedToStart(.noSuchFile))
    }

    /// Past its time limit the program is killed, SIGTERM first.
    @Test func aProgramPastItsTimeLimitIsKilled() {
        let outcome = ChildProcess.run("/bin/sleep", arguments: ["30"], environment: [], timeout: 0.2) { _, _ in }
        #expect(outcome == .timedOut)
    }
}
