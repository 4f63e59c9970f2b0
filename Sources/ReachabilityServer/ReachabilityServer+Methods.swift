import FoundationEssentials
import ReachabilityCore

/// Method dispatch: `org.varlink.service` and `io.reachd.Reachability`.
extension ReachabilityServer {
    func handle(_ call: VarlinkCall, on connection: Connection) {
        if call.upgrade {
            reply(.invalidParameter("upgrade"), to: call, on: connection)
            return
        }
        switch call.interface {
        case Varlink.serviceInterface:
            handleService(call, on: connection)
        case Varlink.reachabilityInterface:
            handleReachability(call, on: connection)
        default:
            reply(.interfaceNotFound(call.interface), to: call, on: connection)
        }
    }

    private func handleService(_ call: VarlinkCall, on connection: Connection) {
        switch call.member {
        case "GetInfo":
            if refusesUnknownParameter(call, allowed: [], on: connection) { return }
            let info: [String: JSONValue] = [
                "vendor": .string(configuration.vendor), "product": .string(configuration.product),
                "version": .string(configuration.version), "url": .string(configuration.url),
                "interfaces": .array([.string(Varlink.serviceInterface), .string(Varlink.reachabilityInterface)]),
            ]
            reply(parameters: info, to: call, on: connection, cacheKey: "GetInfo")
        case "GetInterfaceDescription":
            if refusesUnknownParameter(call, allowed: ["interface"], on: connection) { return }
            guard let name = call.parameters["interface"]?.stringValue else {
                return reply(.invalidParameter("interface"), to: call, on: connection)
            }
            guard let description = InterfaceDescription.description(of: name) else {
                return reply(.interfaceNotFound(name), to: call, on: connection)
            }
            reply(parameters: ["description": .string(description)], to: call, on: connection, cacheKey: "description:" + name)
        default:
            reply(.methodNotFound(call.method), to: call, on: connection)
        }
    }

    private func handleReachability(_ call: VarlinkCall, on connection: Connection) {
        switch call.member {
        case "GetStatus":
            if refusesUnknownParameter(call, allowed: [], on: connection) { return }
            guard !call.oneway else { return }
            connection.send(statusReplyBytes(for: connection))
        case "Subscribe":
            subscribe(call, on: connection)
        case "Check":
            if refusesUnknownParameter(call, allowed: ["host", "port"], on: connection) { return }
            guard let host = call.parameters["host"]?.stringValue, !host.isEmpty else {
                return reply(.invalidParameter("host"), to: call, on: connection)
            }
            var port: Int?
            if let value = call.parameters["port"], !value.isNull {
                guard let number = value.intValue, (1...65535).contains(number) else {
                    return reply(.invalidParameter("port"), to: call, on: connection)
                }
                port = number
            }
            guard let handler = checkHandlerOnQueue else {
                return reply(.methodNotImplemented(call.method), to: call, on: connection)
            }
            // Look-ups block threads and may hang on DNS: a bounded number at once, per user too.
            if checksInFlight >= configuration.limits.maxChecksInFlight {
                connection.reject(.checksBusy, "Check refused: \(checksInFlight) in flight (MaxChecksInFlight=)")
                return reply(.busy(retryAfterMs: HostCheckError.busyRetryAfterMs), to: call, on: connection)
            }
            if checksPerUID[connection.uid, default: 0] >= configuration.limits.maxChecksPerUser {
                connection.reject(.checksBusyForUser, "Check refused: uid \(connection.uid) has \(configuration.limits.maxChecksPerUser) in flight (MaxChecksPerUser=)")
                return reply(.busy(retryAfterMs: HostCheckError.busyRetryAfterMs), to: call, on: connection)
            }
            checksInFlight += 1
            checksPerUID[connection.uid, default: 0] += 1
            connection.holdsCheckSlot = true
            runAsync(call, on: connection, whenDone: { [weak self, weak connection] in
                guard let self, let connection else { return }
                self.releaseCheckSlot(of: connection)
            }) { completion in
                connection.cancelCheck = handler(host, port, completion)
            }
        case "Probe":
            if refusesUnknownParameter(call, allowed: [], on: connection) { return }
            guard let handler = probeHandlerOnQueue else {
                return reply(.probeDisabled, to: call, on: connection)
            }
            runAsync(call, on: connection) { completion in handler(completion) }
        case "Simulate":
            handleSimulate(call, on: connection)
        default:
            reply(.methodNotFound(call.method), to: call, on: connection)
        }
    }

    private func subscribe(_ call: VarlinkCall, on connection: Connection) {
        if refusesUnknownParameter(call, allowed: ["after", "statusOnly", "changes"], on: connection) { return }
        var after: Int?
        if let value = call.parameters["after"], !value.isNull {
            guard let number = value.intValue else { return reply(.invalidParameter("after"), to: call, on: connection) }
            after = number
        }
        var statusOnly = false
        if let value = call.parameters["statusOnly"], !value.isNull {
            guard let flag = value.boolValue else { return reply(.invalidParameter("statusOnly"), to: call, on: connection) }
            statusOnly = flag
        }
        var changes: Set<Status.Field>?
        if let value = call.parameters["changes"], !value.isNull {
            guard let names = value.arrayValue?.map(\.stringValue), !names.contains(nil),
                  let fields = SubscriptionFilter.fields(named: names.compactMap { $0 }) else {
                return reply(.invalidParameter("changes"), to: call, on: connection)
            }
            changes = fields
        }
        guard call.more else { return reply(.expectedMore, to: call, on: connection) }
        guard !call.oneway else { return }

        // The subscription occupies the connection from here on.
        connection.busy = true
        let replay = after.flatMap { history.resumePlan(after: $0) }
        if let after, let replay {
            // Seed the filter with what the subscriber saw at `after`, so the filter applies to the replay.
            let seen = replay.first?.event.previous ?? current
            connection.subscription = SubscriptionFilter(statusOnly: statusOnly, changes: changes, lastSent: seen)
            log(.debug, "connection \(connection.id): resumes after \(after), replaying \(replay.count)")
            // Forced past the queue bound (the history bounds it): a subscriber that catches up
            // after a long absence must not be dropped for the size of what it missed.
            for entry in replay { connection.deliver(entry.event, bytes: entry.bytes(for: connection), force: true) }
        } else {
            connection.subscription = SubscriptionFilter(statusOnly: statusOnly, changes: changes)
            let reason: Reason.Code = after == nil ? .initial : .resync
            let (event, bytes) = initialEventBytes(reason: reason, for: connection)
            connection.deliver(event, bytes: bytes, force: false)
        }
    }

    /// Runs an asynchronous handler; its completion may come from any thread and is answered on
    /// the server's queue, in call order (later calls on this connection wait).
    func runAsync(_ call: VarlinkCall, on connection: Connection, whenDone: (@Sendable () -> Void)? = nil,
                          _ body: (@escaping Completion) -> Void) {
        connection.busy = true
        let answered = SharedMutex(false)
        let queue = self.queue
        body { [weak self, weak connection] result in
            let first = answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
            guard first else { return }
            queue.async { [weak self, weak connection] in
                whenDone?()
                guard let self, let connection, !connection.closed else { return }
                connection.busy = false
                switch result {
                case .parameters(let json):
                    if !call.oneway {
                        var bytes = VarlinkCodec.encodeReply(parametersJSON: json, continues: false)
                        bytes.append(0)
                        connection.send(bytes)
                    }
                case .error(let error):
                    self.reply(error, to: call, on: connection)
                }
                connection.processPending()
            }
        }
    }

    /// Gives back the `Check` slot `connection` holds (its check answered, or it hung up: then
    /// the check is cancelled).
    func releaseCheckSlot(of connection: Connection) {
        guard connection.holdsCheckSlot else { return }
        connection.holdsCheckSlot = false
        checksInFlight -= 1
        if let count = checksPerUID[connection.uid] {
            if count <= 1 { checksPerUID[connection.uid] = nil } else { checksPerUID[connection.uid] = count - 1 }
        }
        let cancel = connection.cancelCheck
        connection.cancelCheck = nil
        if connection.closed { cancel?() }
    }

    /// Replies `InvalidParameter` naming the first parameter of `call` (by name) that is not
    /// `allowed`; true when it did, and the call is answered.
    private func refusesUnknownParameter(_ call: VarlinkCall, allowed: Set<String>, on connection: Connection) -> Bool {
        guard let unknown = call.parameters.keys.sorted().first(where: { !allowed.contains($0) }) else { return false }
        reply(.invalidParameter(unknown), to: call, on: connection)
        return true
    }

    func reply(_ error: VarlinkError, to call: VarlinkCall, on connection: Connection) {
        guard !call.oneway else { return }
        var bytes = VarlinkCodec.encode(error)
        bytes.append(0)
        connection.send(bytes)
    }

    /// - Parameter cacheKey: names a reply that never changes: encoded once, and the same bytes
    ///   are queued for every caller (a thousand clients that do not read hold one copy).
    func reply(parameters: [String: JSONValue], to call: VarlinkCall, on connection: Connection, cacheKey: String? = nil) {
        guard !call.oneway else { return }
        if let cacheKey, let bytes = constantReplies[cacheKey] { return connection.send(bytes) }
        do {
            var bytes = try VarlinkCodec.encodeReply(VarlinkReply(parameters: parameters))
            bytes.append(0)
            if let cacheKey { constantReplies[cacheKey] = bytes }
            connection.send(bytes)
        } catch {
            // As for a handler's reply that cannot be encoded (`VarlinkMethodResult.reply`).
            log(.error, "cannot encode reply to \(call.method): \(error)")
            reply(.internalError, to: call, on: connection)
        }
    }
}
