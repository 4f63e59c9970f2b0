import Testing
@testable import ReachabilityCore

struct INICase: CustomTestStringConvertible, Sendable {
    let name: String
    let text: String
    /// section, key, value, line
    let expected: [(String, String, String, Int)]
    var testDescription: String { name }
}

let iniCases: [INICase] = [
    INICase(name: "empty file", text: "", expected: []),
    INICase(name: "one assignment", text: "[A]\nK=V\n", expected: [("A", "K", "V", 2)]),
    INICase(name: "comments with # and ;", text: "# c\n; c\n[A]\n  # indented comment\nK=V\n;K=W\n",
            expected: [("A", "K", "V", 5)]),
    INICase(name: "whitespace trimmed around key and value", text: "  [ A ]  \n\t K \t=  some value \t\n",
            expected: [("A", "K", "some value", 2)]),
    INICase(name: "empty value kept (reset)", text: "[A]\nK=\nL =  \n", expected: [("A", "K", "", 2), ("A", "L", "", 3)]),
    INICase(name: "value keeps later = and #", text: "[A]\nURL=http://h/?a=b#frag\n",
            expected: [("A", "URL", "http://h/?a=b#frag", 2)]),
    INICase(name: "CRLF line ends", text: "[A]\r\nK=V\r\nL=W\r\n", expected: [("A", "K", "V", 2), ("A", "L", "W", 3)]),
    INICase(name: "blank lines keep numbering", text: "\n\n[A]\n\n\nK=V", expected: [("A", "K", "V", 6)]),
    INICase(name: "duplicates kept in order", text: "[A]\nK=1\n[B]\nK=2\n[A]\nK=3\n",
            expected: [("A", "K", "1", 2), ("B", "K", "2", 4), ("A", "K", "3", 6)]),
]

struct INIErrorCase: CustomTestStringConvertible, Sendable {
    let name: String
    let text: String
    let message: String
    var testDescription: String { name }
}

let iniErrorCases: [INIErrorCase] = [
    INIErrorCase(name: "assignment before a section", text: "# x\nK=V\n", message: "f.conf:2: K=V: assignment outside of any section"),
    INIErrorCase(name: "line without =", text: "[A]\nKV\n", message: "f.conf:2: missing '=' in 'KV' (expected Key=Value)"),
    INIErrorCase(name: "missing key", text: "[A]\n = V\n", message: "f.conf:2: missing key before '=' in '= V'"),
    INIErrorCase(name: "unterminated section", text: "[A\n", message: "f.conf:1: invalid section header '[A' (missing ']')"),
    INIErrorCase(name: "empty section", text: "[ ]\n", message: "f.conf:1: empty section name '[]'"),
    INIErrorCase(name: "line continuation is not supported", text: "[A]\nK=a \\\n b\n", message: "f.conf:3: missing '=' in 'b' (expected Key=Value)"),
]

@Suite struct INIParserTests {
    @Test(arguments: iniCases)
    func parses(_ c: INICase) throws {
        let file = try INIParser.parse(c.text, file: "f.conf")
        #expect(file.assignments.map { [$0.section, $0.key, $0.value, "\($0.line)"] }
                == c.expected.map { [$0.0, $0.1, $0.2, "\($0.3)"] })
        #expect(file.assignments.allSatisfy { $0.file == "f.conf" })
    }

    @Test(arguments: iniErrorCases)
    func rejects(_ c: INIErrorCase) {
        #expect(throws: ConfigurationError.self) { try INIParser.parse(c.text, file: "f.conf") }
        do {
            _ = try INIParser.parse(c.text, file: "f.conf")
        } catch {
            #expect(error.description == c.message)
        }
    }

    @Test func reportsSectionHeadersWithoutAssignments() throws {
        let file = try INIParser.parse("[A]\n[B]\nK=V\n", file: "f")
        #expect(file.sections.map(\.name) == ["A", "B"])
        #expect(file.sections.map(\.line) == [1, 2])
    }
}
