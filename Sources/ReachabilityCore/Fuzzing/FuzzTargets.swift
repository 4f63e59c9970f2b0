import FoundationEssentials

/// The parsers that take bytes from outside, each as one function of raw bytes: what the
/// libFuzzer targets in `fuzz/` call (`make fuzz`), and what the regression test replays every
/// saved input through (`fuzz/corpus/…`, `fuzz/regressions/…`). Each must return for any input:
/// a crash or a trap here is a bug in the parser.
package enum FuzzTargets {
    /// The varlink server's input: the bytes cut into messages at NUL (in pieces whose size the
    /// first byte chooses, as reads would deliver them), each decoded as a call.
    /// - Returns: how many calls decoded (for tests).
    @discardableResult
    package static func varlink(_ data: [UInt8]) -> Int {
        guard let first = data.first else { return 0 }
        let chunk = Int(first % 64) + 1
        var framer = VarlinkFramer()
        var calls = 0
        var offset = 1
        while offset < data.count {
            let end = min(offset + chunk, data.count)
            framer.append(data[offset..<end])
            offset = end
            do {
                while let message = try framer.next() {
                    if let call = try? VarlinkCodec.decodeCall(message) {
                        calls += 1
                        // What the server reads from a call.
                        _ = call.parameters["host"]?.stringValue
                        _ = call.parameters["port"]?.intValue
                        _ = call.parameters["after"]?.intValue
                        _ = call.parameters["statusOnly"]?.boolValue
                        _ = try? VarlinkCodec.encode(call)
                    }
                }
            } catch {
                return calls   // the server closes the connection here
            }
        }
        return calls
    }

    /// A configuration file.
    /// - Returns: whether it loaded.
    @discardableResult
    package static func configuration(_ data: [UInt8]) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        return (try? ReachdConfiguration.parse(text, file: "fuzz.conf")) != nil
    }

    /// An HTTP answer to the connectivity check, in pieces as reads would deliver them, then
    /// the verdict it makes.
    /// - Returns: the verdict, nil when the answer did not parse.
    @discardableResult
    package static func httpResponse(_ data: [UInt8]) -> Connectivity? {
        guard let first = data.first else { return nil }
        let chunk = Int(first) * 16 + 1
        var parser = HTTPResponseParser(maxBodyBytes: 64 * 1024)
        var response: HTTPResponse?
        var offset = 1
        do {
            while offset < data.count, response == nil {
                let end = min(offset + chunk, data.count)
                response = try parser.feed(data[offset..<end])
                offset = end
            }
            if response == nil { response = try parser.finish() }
        } catch {
            return nil
        }
        guard let response else { return nil }
        let probe = ProbeVerdict.probe(url: "http://10.0.0.1/generate_204", expectedResponse: "",
                                       outcome: .response(response), rttMs: 1, checkedAt: Date(timeIntervalSince1970: 0))
        _ = probe.summary
        return probe.result
    }

    /// Router advertisement options as the kernel hands them on: the bytes as ND options, each
    /// one understood applied to an interface's announcements, then described and expired.
    /// - Returns: how many options were understood.
    @discardableResult
    package static func routerOptions(_ data: [UInt8]) -> Int {
        var announced = RouterAnnouncements()
        var understood = 0
        for (i, result) in RouterOptionParser.parse(data, ifindex: 2).enumerated() {
            switch result {
            case .success(var option):
                option.receivedAt = Double(i)
                announced.apply(option)
                understood += 1
            case .failure(let error):
                _ = error.description
            }
        }
        _ = ReasonDeriver.describe(nil, announced)
        _ = announced.nextDeadline
        announced.expire(now: Double(data.count))
        return understood
    }

    /// A captive-portal API's answer (RFC 8908 JSON): the state it gives, the verdict made of
    /// it and that verdict's summary.
    /// - Returns: `captive`, nil when the answer is broken.
    @discardableResult
    package static func captivePortalAPI(_ data: [UInt8]) -> Bool? {
        guard case .success(let state) = CaptivePortalAPI.state(json: data) else { return nil }
        let epoch = Date(timeIntervalSince1970: 0)
        let checked = Probe(url: "http://10.0.0.1/generate_204", result: .full, httpStatus: 204, checkedAt: epoch)
        let probe = state.captive
            ? CaptivePortalAPI.portal(state, api: "https://10.0.0.1/capport", rttMs: 1, checkedAt: epoch)
            : CaptivePortalAPI.merge(.success(state), api: "https://10.0.0.1/capport", into: checked)
        _ = probe.summary
        _ = probe.sessionLeft(now: Date(timeIntervalSince1970: 1e9))
        if let seconds = state.secondsRemaining { _ = CaptivePortalAPI.recheckDelay(secondsRemaining: seconds) }
        return state.captive
    }

    /// ModemManager's answers and signals: the bytes build D-Bus value trees of any shape
    /// (`DBusValue.fuzzed`), which the model takes as a `GetManagedObjects` reply, signals and
    /// bearer properties.
    /// - Returns: the modems the model ends with.
    @discardableResult
    package static func modemManager(_ data: [UInt8]) -> [ModemState] {
        var reader = FuzzByteReader(data)
        var model = ModemManagerModel()
        let members = ["InterfacesAdded", "InterfacesRemoved", "PropertiesChanged", "NameOwnerChanged", "Other"]
        let paths = [ModemManagerDBus.path, "/org/freedesktop/ModemManager1/Modem/0", "/org/freedesktop/ModemManager1/Bearer/0", "/", ""]
        var steps = 0
        while !reader.isEmpty, steps < 64 {
            steps += 1
            let arguments = (0..<Int(reader.byte() % 4)).map { _ in DBusValue.fuzzed(&reader, depth: 0) }
            switch reader.byte() % 4 {
            case 0: _ = model.apply(managedObjects: arguments)
            case 1: _ = model.apply(signal: members[Int(reader.byte()) % members.count], path: paths[Int(reader.byte()) % paths.count], arguments: arguments)
            case 2: model.apply(bearer: paths[Int(reader.byte()) % paths.count], getAllReply: reader.byte() % 2 == 0 ? nil : arguments)
            default: model.reset()
            }
        }
        return model.modems
    }
}

extension FuzzTargets {
    /// A sock_diag dump reply datagram, read twice through a `PassiveSampleBook` (the second
    /// time with every counter grown, so that each record reaches the attribution), routed by
    /// the address's last byte.
    /// - Returns: how many records were read, nil when the datagram was refused as a whole.
    @discardableResult
    package static func sockDiag(_ data: [UInt8]) -> Int? {
        var records: [SockDiagRecord] = []
        do throws(SockDiagError) {
            _ = try SockDiagReply.parse(data, into: &records)
        } catch {
            _ = error.description
            if records.isEmpty { return nil }
        }
        var book = PassiveSampleBook()
        let prefixes = [2: [InterfacePrefix(family: .ipv4, address: AddressBits(bytes: [10, 0, 0, 0]), length: 8)]]
        let route: (SockDiagRouteQuery) -> Int? = { query in
            let last = Int(query.destination.low & 0xff) | Int(query.destination.high >> 32 & 0xff)
            return last % 3 == 0 ? nil : last % 3
        }
        _ = book.record(records, uptime: 0, ownPrefixes: prefixes, uplink: route)
        let grown = records.map { record -> SockDiagRecord in
            var record = record
            if var info = record.info {
                info.bytesAcked = info.bytesAcked.map { $0 &+ 1 }
                info.bytesReceived = info.bytesReceived.map { $0 &+ 1 }
                info.segmentsOut = info.segmentsOut.map { $0 &+ 1 }
                record.info = info
            }
            return record
        }
        _ = book.record(grown, uptime: 10, ownPrefixes: prefixes, uplink: route)
        return records.count
    }
}

extension FuzzTargets {
    /// An nl80211 reply datagram (station and interface records), each station then made into a
    /// `WiFiStation` with the interface record of its ifindex, shown, compared with the one
    /// before it (the roam detector) and put before the owner arbiter.
    /// - Returns: how many records were read, nil when the datagram was refused as a whole.
    @discardableResult
    package static func nl80211(_ data: [UInt8]) -> Int? {
        var records = NL80211Reply.Records()
        do throws(NL80211ReplyError) {
            _ = try NL80211Reply.parse(data, into: &records)
        } catch {
            _ = error.description
            if records.stations.isEmpty && records.interfaces.isEmpty { return nil }
        }
        var previous: WiFiStation?
        for station in records.stations {
            let interface = records.interfaces.first { $0.ifindex == station.ifindex }
            let current = WiFiStation(nl80211: station, interface: interface)
            _ = current.ssid?.display
            _ = current.bssid?.description
            _ = (current.band, current.bars, current.strengthPercent)
            if let previous { _ = current.filling(from: previous) }
            _ = WiFiChange.between(previous, current).isQuiet
            let claims = [WiFiOwnerClaim(owner: .nl80211, state: station.associated == false ? .disconnected : .connected, station: current),
                          WiFiOwnerClaim(owner: .iwd, state: WiFiLinkState(iwdStationState: current.ssid?.display), station: previous)]
            _ = WiFiOwnerArbiter.winner(claims)
            previous = current
        }
        return records.stations.count + records.interfaces.count
    }
}

/// Reads a fuzzer's bytes as a stream of choices; zeros once they run out.
package struct FuzzByteReader {
    private let data: [UInt8]
    private var offset = 0
    package init(_ data: [UInt8]) { self.data = data }
    package var isEmpty: Bool { offset >= data.count }
    public mutating func byte() -> UInt8 {
        guard offset < data.count else { return 0 }
        defer { offset += 1 }
        return data[offset]
    }
    public mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
    public mutating func uint32() -> UInt32 { bytes(4).reduce(0) { $0 << 8 | UInt32($1) } }
}

extension DBusValue {
    /// A value of any shape chosen by `reader`'s bytes, nested at most 6 deep.
    static func fuzzed(_ reader: inout FuzzByteReader, depth: Int) -> DBusValue {
        let kind = reader.byte() % (depth >= 6 ? 12 : 17)
        func text() -> String {
            let known = ["Ports", "Bearers", "AccessTechnologies", "SignalQuality", "RegistrationState", "Interface", "Connected",
                         "org.freedesktop.ModemManager1.Modem", "org.freedesktop.ModemManager1.Modem.Modem3gpp",
                         "org.freedesktop.ModemManager1.Bearer", "/org/freedesktop/ModemManager1/Modem/0",
                         "/org/freedesktop/ModemManager1/Bearer/0", "wwan0", "Cdma1xRegistrationState"]
            let choice = reader.byte()
            if Int(choice) < known.count { return known[Int(choice)] }
            return String(decoding: reader.bytes(Int(choice % 16)), as: UTF8.self)
        }
        switch kind {
        case 0: return .byte(reader.byte())
        case 1: return .bool(reader.byte() % 2 == 0)
        case 2: return .int16(Int16(truncatingIfNeeded: reader.uint32()))
        case 3: return .uint16(UInt16(truncatingIfNeeded: reader.uint32()))
        case 4: return .int32(Int32(bitPattern: reader.uint32()))
        case 5: return .uint32(reader.uint32())
        case 6: return .int64(Int64(reader.uint32()) << 32 | Int64(reader.uint32()))
        case 7: return .uint64(UInt64(reader.uint32()) << 32 | UInt64(reader.uint32()))
        case 8: return .double(Double(bitPattern: UInt64(reader.uint32()) << 32 | UInt64(reader.uint32())))
        case 9: return .string(text())
        case 10: return .objectPath(text())
        case 11: return .signature(text())
        case 12: return .array((0..<Int(reader.byte() % 5)).map { _ in fuzzed(&reader, depth: depth + 1) })
        case 13: return .dictEntry(fuzzed(&reader, depth: depth + 1), fuzzed(&reader, depth: depth + 1))
        case 14: return .structure((0..<Int(reader.byte() % 4)).map { _ in fuzzed(&reader, depth: depth + 1) })
        case 15: return .variant(fuzzed(&reader, depth: depth + 1))
        default: return .unixFD(Int32(reader.byte()))
        }
    }
}
