import Foundation

/// A fenced block of README.md or docs/*.md that the documentation examples test runs: one marked
/// by the HTML comment `<!-- example: SCENARIO -->` on the line before its opening fence, or
/// any `console` block or block with `$ ` prompts (which must be marked). `<!-- example: not
/// run (WHY) -->` marks one that cannot run here (it needs hardware); the test counts those.
struct DocumentationExample: Sendable, CustomStringConvertible {
    /// The file, relative to the package root.
    let file: String
    /// The line of the opening fence, from 1.
    let line: Int
    /// The fence's info string: `console`, `sh`, `python`, ….
    let language: String
    /// What the comment says after `example:`; nil when the block has none.
    let mark: String?
    /// The lines between the fences.
    let body: [String]

    var description: String { "\(file):\(line)" }

    /// The reason of a block marked `not run (…)`.
    var notRunReason: String? {
        guard let mark, mark.hasPrefix("not run") else { return nil }
        let reason = mark.dropFirst("not run".count).trimmingCharacters(in: .whitespaces)
        return reason.hasPrefix("(") && reason.hasSuffix(")") ? String(reason.dropFirst().dropLast()) : reason
    }

    /// The make target that runs the block instead (`built and run by make external-package-test`).
    var runBy: String? {
        guard let mark, let range = mark.range(of: "by make ") else { return nil }
        return "make " + mark[range.upperBound...].trimmingCharacters(in: .whitespaces)
    }

    /// The program that checks a configuration example (`<!-- example: reachd --check-config -->`).
    var configChecker: String? {
        guard let mark, mark.hasSuffix(" --check-config") else { return nil }
        return String(mark.dropLast(" --check-config".count))
    }

    /// The situation the block runs in, for a block this test runs.
    var scenario: String? { notRunReason == nil && runBy == nil && configChecker == nil ? mark : nil }

    /// A console transcript: each `$ ` line with the output shown under it.
    var steps: [ConsoleStep] {
        var steps: [ConsoleStep] = []
        for line in body {
            if line.hasPrefix("$ ") {
                steps.append(ConsoleStep(command: String(line.dropFirst(2)), expected: []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].expected.append(line)
            } else {
                steps.append(ConsoleStep(command: "", expected: [line]))
            }
        }
        return steps
    }
}

/// One command of a console transcript and the output the documentation shows for it.
struct ConsoleStep: Sendable, Equatable {
    /// The command line after `$ `, as a shell reads it (a `# …` at its end is a comment).
    let command: String
    var expected: [String]

    /// A command that runs until interrupted: it is stopped once its output has been shown.
    var runsUntilInterrupted: Bool {
        let words = command.split(separator: "#", maxSplits: 1).first.map { $0.split(separator: " ").map(String.init) } ?? []
        guard words.first == "reachctl" else { return false }
        if words.contains("monitor") || words.contains("--watch") { return true }
        // `simulate STATUS` without --for holds the simulation until Ctrl-C.
        if words.count > 1, words[1] == "simulate" { return !words.contains { ["--for", "--reset", "--script"].contains($0) } }
        return false
    }

    /// The output stops being compared at a line `…`: the command is stopped once the lines
    /// before it are there.
    var endsWithEllipsis: Bool { expected.last == DocumentationExamples.ellipsis }
}

enum DocumentationExamples {
    static let ellipsis = "…"

    /// README.md and docs/*.md under `root`, relative to it, sorted.
    static func files(root: String) -> [String] {
        let docs = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/docs")) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md"] + docs
    }

    /// The blocks of one Markdown text that are examples (see `DocumentationExample`).
    static func examples(in text: String, file: String) -> [DocumentationExample] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var examples: [DocumentationExample] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```") else { index += 1; continue }
            // A fence closes with at least as many backticks as it opened with (CommonMark), so
            // a block may show another block.
            let fence = line.prefix { $0 == "`" }
            let language = line.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
            var end = index + 1
            while end < lines.count && !(lines[end].hasPrefix(fence) && lines[end].allSatisfy { $0 == "`" }) { end += 1 }
            let body = Array(lines[(index + 1)..<min(end, lines.count)])
            let mark = index > 0 ? Self.mark(lines[index - 1]) : nil
            // A markdown block shows how examples are written; it is none.
            if language != "markdown", mark != nil || language == "console" || body.contains(where: { $0.hasPrefix("$ ") }) {
                examples.append(DocumentationExample(file: file, line: index + 1, language: language, mark: mark, body: body))
            }
            index = end + 1
        }
        return examples
    }

    /// The text of an `<!-- example: TEXT -->` line.
    static func mark(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<!-- example:"), trimmed.hasSuffix("-->") else { return nil }
        return trimmed.dropFirst("<!-- example:".count).dropLast("-->".count).trimmingCharacters(in: .whitespaces)
    }

    /// A line with what differs from run to run replaced: times (`2026-11-29T14:27:27.343Z`),
    /// event sequence numbers (`#1795962446345`), durations in milliseconds (`18.2 ms`,
    /// `(41 ms)`) and fractional sample values of metrics (seconds, timestamps). Addresses,
    /// names, counts and everything else stay as they are.
    static func masked(_ line: String) -> String {
        var text = line
        text.replace(#/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/#, with: "<time>")
        text.replace(#/\#\d{6,}/#, with: "#<seq>")
        text.replace(#/\d+(\.\d+)? ms\b/#, with: "<n> ms")
        if let sample = text.wholeMatch(of: #/(reachd_\S+) -?\d+\.\d+(e[-+]?\d+)?/#) {
            text = "\(sample.output.1) <value>"
        }
        return text
    }

    /// Whether one line of output has the shape of the line the documentation shows: equal once
    /// masked, where each `…` in the documented line stands for any text.
    static func lineMatches(expected: String, actual: String) -> Bool {
        let pattern = masked(expected), text = masked(actual)
        let pieces = pattern.components(separatedBy: ellipsis)
        guard pieces.count > 1 else { return pattern == text }
        guard text.hasPrefix(pieces[0]), text.dropFirst(pieces[0].count).hasSuffix(pieces[pieces.count - 1]) else { return false }
        var rest = Substring(text.dropFirst(pieces[0].count).dropLast(pieces[pieces.count - 1].count))
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }

    /// Whether the output has the shape the documentation shows: line by line as `lineMatches`,
    /// where a line that is only `…` stands for any number of lines, none included.
    static func matches(expected: [String], actual: [String]) -> Bool {
        guard let first = expected.first else { return actual.isEmpty }
        if first == ellipsis {
            let rest = Array(expected.dropFirst())
            return (0...actual.count).contains { matches(expected: rest, actual: Array(actual.dropFirst($0))) }
        }
        guard let line = actual.first, lineMatches(expected: first, actual: line) else { return false }
        return matches(expected: Array(expected.dropFirst()), actual: Array(actual.dropFirst()))
    }

    /// Expected and actual side by side, for a failure message.
    static func difference(expected: [String], actual: [String]) -> String {
        "documented:\n" + expected.map { "    " + $0 }.joined(separator: "\n")
            + "\nprinted:\n" + actual.map { "    " + $0 }.joined(separator: "\n")
    }
}
