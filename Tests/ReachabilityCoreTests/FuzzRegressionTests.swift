import Foundation
import Testing
@testable import ReachabilityCore

/// Every saved fuzz input (`fuzz/corpus/TARGET`: seeds; `fuzz/regressions/TARGET`: what
/// `make fuzz` found crashing, kept once fixed) goes through its parser again: none may crash,
/// and the seeds named `ok-…` are inputs the parser must accept.
enum FuzzInputs {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../fuzz").standardized.path

    /// (file name, bytes) of every input of `target`, seeds and regressions.
    static func inputs(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        var result: [(String, [UInt8])] = []
        for directory in ["corpus", "regressions"] {
            let path = "\(root)/\(directory)/\(target)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let data = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
                result.append((name, Array(data)))
            }
        }
        return result
    }
}

@Suite struct FuzzRegressionTests {
    @Test func varlink() throws {
        let inputs = try FuzzInputs.inputs("varlink")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let calls = FuzzTargets.varlink(input.bytes)
            if input.name.hasPrefix("ok-") { #expect(calls >= 1, "\(input.name)") }
        }
    }

    @Test func configuration() throws {
        let inputs = try FuzzInputs.inputs("configuration")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let loaded = FuzzTargets.configuration(input.bytes)
            if input.name.hasPrefix("ok-") { #expect(loaded, "\(input.name)") }
        }
    }

    @Test func httpResponse() throws {
        let inputs = try FuzzInputs.inputs("http")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let verdict = FuzzTargets.httpResponse(input.bytes)
            if input.name.hasPrefix("ok-") { #expect(verdict != nil, "\(input.name)") }
        }
    }

    @Test func routerOptions() throws {
        let inputs = try FuzzInputs.inputs("routeroptions")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let understood = FuzzTargets.routerOptions(input.bytes)
            if input.name.hasPrefix("ok-") { #expect(understood >= 1, "\(input.name)") }
        }
    }

    @Test func captivePortalAPI() throws {
        let inputs = try FuzzInputs.inputs("captiveapi")
        #expect(!inputs.isEmpty)
        for input in inputs {
            let captive = FuzzTargets.captivePortalAPI(input.bytes)
            if input.name.hasPrefix("ok-") { #expect(captive != nil, "\(input.name)") }
        }
    }

    @Test func modemManager() throws {
        let inputs = try FuzzInputs.inputs("modemmanager")
        #expect(!inputs.isEmpty)
        for input in inputs { _ = FuzzTargets.modemManager(input.bytes) }
    }
}
