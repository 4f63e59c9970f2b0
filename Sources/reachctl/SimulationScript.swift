import ReachabilityCore

/// A network to play, step by step (`reachctl simulate --script FILE`): one step a line,
/// `STATUS [CONNECTIVITY] SECONDS`, `#` starts a comment, blank lines are skipped.
///
/// ```
/// # a train ride
/// wifi full 10
/// wwan4G 20
/// wwan2G limited 15
/// notReachable 5
/// ```
public struct SimulationScript: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        public var status: NetworkStatus
        public var connectivity: Connectivity?
        public var seconds: Int
        /// The line of the file the step is on (1-based).
        public var line: Int

        public init(status: NetworkStatus, connectivity: Connectivity? = nil, seconds: Int, line: Int) {
            self.status = status; self.connectivity = connectivity; self.seconds = seconds; self.line = line
        }
    }

    /// A line that is not a step, with its number and what is wrong.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let line: Int
        public let message: String

        public var description: String { "line \(line): \(message)" }
    }

    public var steps: [Step]

    public init(steps: [Step]) { self.steps = steps }

    /// Parses a script; the first bad line is the error. A script without a step is one too.
    public static func parse(_ text: String) throws(ParseError) -> SimulationScript {
        var steps: [Step] = []
        var number = 0
        // `\r\n` is one Character in Swift: split on any line break, not on "\n".
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if words.isEmpty { continue }
            guard words.count == 2 || words.count == 3 else {
                throw ParseError(line: number, message: "expected STATUS [CONNECTIVITY] SECONDS, found \(words.count) word\(words.count == 1 ? "" : "s")")
            }
            guard let status = NetworkStatus(rawValue: words[0]) else {
                throw ParseError(line: number, message: "unknown status \"\(words[0])\" (one of \(NetworkStatus.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            var connectivity: Connectivity?
            if words.count == 3 {
                guard let value = Connectivity(rawValue: words[1]) else {
                    throw ParseError(line: number, message: "unknown connectivity \"\(words[1])\" (one of \(Connectivity.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                if status.isReachable, value == .none {
                    throw ParseError(line: number, message: "connectivity none means not reachable; write notReachable")
                }
                if !status.isReachable, value != .none {
                    throw ParseError(line: number, message: "notReachable has connectivity none, not \(value.rawValue)")
                }
                connectivity = value
            }
            let secondsWord = words[words.count - 1]
            guard let seconds = Int(secondsWord) else {
                throw ParseError(line: number, message: "\"\(secondsWord)\" is not a number of seconds")
            }
            guard (1...SimulateRequest.maximumSeconds).contains(seconds) else {
                throw ParseError(line: number, message: "\(seconds) seconds is not between 1 and \(SimulateRequest.maximumSeconds)")
            }
            steps.append(Step(status: status, connectivity: connectivity, seconds: seconds, line: number))
        }
        guard !steps.isEmpty else { throw ParseError(line: number, message: "the script has no step") }
        return SimulationScript(steps: steps)
    }
}
