import Dispatch
import FoundationEssentials
import ReachabilityClient
import ReachabilityCore
import ReachabilitySystem

/// `reachctl simulate …`: plays a network to the apps through varlink `Simulate`.
func runSimulate(client: ReachabilityClient, command: SimulateCommand) -> Never {
    switch command {
    case .reset:
        let connection = connect(client)
        let status = simulate(connection, ["reset": .bool(true)])
        printLine("simulation ended: \(Style().summary(status))")
        ProcessSetup.exit(ExitCode.success)
    case .play(let status, let connectivity, let expensive, let seconds):
        var parameters: [String: JSONValue] = ["status": .string(status.rawValue)]
        if let connectivity { parameters["connectivity"] = .string(connectivity.rawValue) }
        if expensive { parameters["expensive"] = .bool(true) }
        let connection = connect(client)
        if let seconds {
            parameters["seconds"] = .int(seconds)
            let published = simulate(connection, parameters)
            printLine("simulating for \(seconds) s: \(Style().summary(published))")
            ProcessSetup.exit(ExitCode.success)
        }
        // Until interrupted: the simulation lasts while this connection is open.
        parameters["whileConnected"] = .bool(true)
        exitOnInterrupt(with: ExitCode.success)
        let published = simulate(connection, parameters)
        printLine("simulating until interrupted (Ctrl-C): \(Style().summary(published))")
        waitForHangUp(connection)
    case .script(let path):
        let script: SimulationScript
        do {
            let text = try readScript(path)
            script = try SimulationScript.parse(text)
        } catch let error as SimulationScript.ParseError {
            fail("\(path): \(error)", code: ExitCode.usage)
        } catch {
            fail("cannot read \(path): \(error)", code: ExitCode.usage)
        }
        let connection = connect(client)
        exitOnInterrupt(with: ExitCode.success)
        for step in script.steps {
            var parameters: [String: JSONValue] = ["status": .string(step.status.rawValue), "whileConnected": .bool(true),
                                                   // A margin past the step, so that the next step replaces it
                                                   // before it could end by itself; a lost reachctl still ends it.
                                                   "seconds": .int(min(step.seconds + 10, SimulateRequest.maximumSeconds))]
            if let connectivity = step.connectivity { parameters["connectivity"] = .string(connectivity.rawValue) }
            let published = simulate(connection, parameters)
            printLine("line \(step.line): \(step.seconds) s: \(Style().summary(published))")
            ProcessSetup.sleep(seconds: UInt32(step.seconds))
        }
        let status = simulate(connection, ["reset": .bool(true)])
        printLine("script done: \(Style().summary(status))")
        ProcessSetup.exit(ExitCode.success)
    }
}

/// One connection for the whole command: its hang-up is what ends a `whileConnected` simulation.
private func connect(_ client: ReachabilityClient) -> VarlinkConnection {
    do {
        return try VarlinkConnection(socketPath: client.socketPath, timeout: client.callTimeout)
    } catch {
        exitOnError(error)
    }
}

/// One `Simulate` call; reachd's refusals become reachctl's messages and exit statuses.
private func simulate(_ connection: VarlinkConnection, _ parameters: [String: JSONValue]) -> Status {
    do {
        let reply = try connection.call(VarlinkCall(method: "\(Varlink.reachabilityInterface).Simulate", parameters: parameters))
        return try reply.decode(Status.self, key: "status")
    } catch ReachabilityClientError.remote(let error) where error.name == VarlinkError.permissionDenied.name {
        fail("permission denied: simulating needs root or membership of the group in reachd's [Simulation] Group=",
             code: ExitCode.permissionDenied)
    } catch ReachabilityClientError.remote(let error) where error.name == "org.varlink.service.InvalidParameter" {
        let parameter = error.parameters["parameter"]?.stringValue ?? "?"
        fail("reachd refused the parameter '\(parameter)' (\(describe(parameters)))", code: ExitCode.usage)
    } catch {
        exitOnError(error)
    }
}

private func describe(_ parameters: [String: JSONValue]) -> String {
    parameters.keys.sorted().map { key in
        let value = parameters[key]
        return "\(key)=\(value?.stringValue ?? value?.intValue.map(String.init) ?? value?.boolValue.map(String.init) ?? "null")"
    }.joined(separator: " ")
}

/// Blocks until reachd closes the connection (it stopped): the simulation is over then.
private func waitForHangUp(_ connection: VarlinkConnection) -> Never {
    while true {
        do {
            _ = try connection.receiveMessage()
        } catch ReachabilityClientError.timedOut {
            continue
        } catch {
            fail("reachd closed the connection; the simulation is over", code: ExitCode.unavailable)
        }
    }
}

/// Why a script file could not be read: the `strerror` text, or "not valid UTF-8".
private struct ScriptReadError: Error, CustomStringConvertible {
    let description: String
}

/// The whole file at `path` as UTF-8 text (`open(2)`, `read(2)`).
private func readScript(_ path: String) throws(ScriptReadError) -> String {
    let bytes: [UInt8]
    do {
        bytes = try FileDescriptor.open(path).readToEnd()
    } catch {
        throw ScriptReadError(description: error.text)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else { throw ScriptReadError(description: "not valid UTF-8") }
    return text
}
