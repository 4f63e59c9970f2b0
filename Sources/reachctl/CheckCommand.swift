import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

/// `reachctl check HOST [--port N] [--json] [--watch]`: 0 reachable, 1 not reachable or host not
/// found, 2 a host that is not a valid name or address.
func runCheck(client: ReachabilityClient, host: String, port: Int?, json: Bool, watch: Bool) async -> Never {
    // The daemon refuses it too, but names only the parameter: say here what is wrong with it.
    do {
        _ = try HostName.parse(host)
    } catch {
        fail("\(error)", code: ExitCode.usage)
    }
    if watch { await watchCheck(client: client, host: host, port: port, json: json) }
    switch await CheckOutcome.ask(client, host: host, port: port) {
    case let .answer(answer):
        printLine(json ? jsonLine(answer) : Style().checkSummary(answer))
        ProcessSetup.exit(answer.reachable ? ExitCode.success : ExitCode.failure)
    case .hostNotFound:
        fail("\(host): host not found")
    case .invalidHost:
        fail("invalid host: \(host)", code: ExitCode.usage)
    case let .failed(error):
        exitOnError(error)
    }
}

/// `--watch`: checks once, then again on every event of a subscription, and prints a line (or a
/// JSON object) each time the answer differs from the last one printed (the TCP round trip does
/// not count). Runs until interrupted: exit 0.
private func watchCheck(client: ReachabilityClient, host: String, port: Int?, json: Bool) async -> Never {
    exitOnInterrupt(with: ExitCode.success)
    let style = Style()
    var last: CheckOutcome?
    let first = FirstAnswer(socketPath: client.socketPath, seconds: client.callTimeout)
    do {
        for try await _ in client.events() {
            first.hear()
            let outcome = await CheckOutcome.ask(client, host: host, port: port)
            guard outcome != last else { continue }
            last = outcome
            let now = Timestamp.string(from: Date())
            switch outcome {
            case let .answer(answer):
                printLine(json ? jsonLine(answer) : "\(now) \(style.checkSummary(answer))")
            case .hostNotFound:
                printLine(json ? jsonLine(HostNotFoundLine(host: host)) : "\(now) \(host): host not found")
            case .invalidHost:
                fail("invalid host: \(host)", code: ExitCode.usage)
            case let .failed(error):
                exitOnError(error)
            }
        }
        exitOnError(ReachabilityClientError.connectionClosed)
    } catch {
        exitOnError(error)
    }
}

/// `--watch --json`'s line for a name that stopped resolving: the varlink error, as sent.
private struct HostNotFoundLine: Encodable {
    let error = VarlinkError.hostNotFound("").name
    let parameters: [String: String]
    init(host: String) { parameters = ["host": host] }
}

/// One `Check` call's outcome; equal when `--watch` has nothing new to print.
enum CheckOutcome: Equatable {
    case answer(HostCheck)
    case hostNotFound
    case invalidHost
    case failed(ReachabilityClientError)

    static func ask(_ client: ReachabilityClient, host: String, port: Int?) async -> CheckOutcome {
        do {
            return .answer(try await client.check(host: host, port: port))
        } catch let ReachabilityClientError.remote(error) where error.name == VarlinkError.hostNotFound(host).name {
            return .hostNotFound
        } catch let ReachabilityClientError.remote(error) where error.name == VarlinkError.invalidParameter("host").name {
            return .invalidHost
        } catch let error as ReachabilityClientError {
            return .failed(error)
        } catch {
            return .failed(.protocolError("\(error)"))
        }
    }

    static func == (a: CheckOutcome, b: CheckOutcome) -> Bool {
        switch (a, b) {
        case let (.answer(x), .answer(y)): return x.comparable == y.comparable
        case (.hostNotFound, .hostNotFound), (.invalidHost, .invalidHost): return true
        case let (.failed(x), .failed(y)): return x == y
        case (.answer, _), (.hostNotFound, _), (.invalidHost, _), (.failed, _): return false
        }
    }
}

extension Style {
    /// The check's summary line with `reachable` green and `not reachable` red.
    func checkSummary(_ answer: HostCheck) -> String {
        let line = safe(answer.summary)
        guard enabled else { return line }
        for (word, colour) in [(": not reachable", "31"), (": reachable", "32")] {
            if let range = line.firstRange(of: word) {
                return String(line[..<range.lowerBound]) + ": " + paint(String(word.dropFirst(2)), colour) + String(line[range.upperBound...])
            }
        }
        return line
    }
}
