import FoundationEssentials

/// Writes the wire JSON of `Status`, `ReachabilityEvent` and their parts straight into UTF-8
/// bytes, without `JSONEncoder`.
///
/// The daemon sends one event per change to every subscriber; Foundation's encoder (generic
/// `Codable` boxing, dynamic casts, dictionaries, a date formatter) was a third of its CPU per
/// event. The types are fixed and flat, so this writer spells them out field by field. Its output
/// is byte for byte what `WireJSON.encoder()` produces (`.sortedKeys`, `.withoutEscapingSlashes`:
/// keys in byte order, every field present with `null` for an absent optional, strings escaped as
/// RFC 8259 requires, numbers and timestamps formatted alike); the tests compare the two.
///
/// One difference on purpose: a non-finite number (an RTT, a loss, a signal figure: none is
/// ever measured so) is written as `null`, where `JSONEncoder` throws and the event would be lost.
///
/// It writes into memory of its own, grown by doubling, rather than into an array: an event is
/// a hundred or so small appends, and each of an array's (uniqueness, capacity, generic copy)
/// cost several times the copy. Not copyable, so that the memory has exactly one owner.
public struct WireJSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    /// - Parameter capacity: bytes to reserve (an event with a few interfaces is 1–3 KiB).
    public init(capacity: Int = 0) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The JSON written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The JSON written so far, as `Data`.
    public var data: Data { Data(bytes: base, count: count) }

    /// Room for `extra` more bytes at `base + count`.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        let larger = max(needed, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Appends `source` as it is.
    @inline(__always)
    private mutating func append(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        (base + count).initialize(from: start, count: source.count)
        count += source.count
    }

    // MARK: one-shot helpers

    /// The JSON object of `status`.
    public static func json(_ status: Status) -> [UInt8] {
        var writer = WireJSONWriter(capacity: 1024)
        writer.write(status)
        return writer.bytes
    }

    /// The JSON object of `event`. `previousJSON`/`currentJSON` are the already-written objects of
    /// `event.previous`/`event.current` when the caller has them (the previous event's `current`
    /// is this one's `previous`), spliced in as they are instead of written again.
    public static func json(_ event: ReachabilityEvent, previousJSON: [UInt8]? = nil,
                            currentJSON: [UInt8]? = nil) -> [UInt8] {
        var writer = WireJSONWriter(capacity: 2048)
        writer.write(event, previousJSON: previousJSON, currentJSON: currentJSON)
        return writer.bytes
    }

    // MARK: objects (keys in byte order, as `.sortedKeys` writes them)

    /// Writes `{"cellular":…,"connectivity":…,…,"vpn":…}`.
    public mutating func write(_ status: Status) {
        raw(#"{"cellular":"#); optional(status.cellular) { $0.write($1) }
        raw(#","connectivity":"#); string(status.connectivity.rawValue)
        raw(#","connectivityCheck":"#); bool(status.connectivityCheck)
        raw(#","constrained":"#); bool(status.constrained)
        raw(#","expensive":"#); bool(status.expensive)
        raw(#","flags":"#); array(status.flags) { $0.string($1.rawValue) }
        raw(#","gateways":"#); strings(status.gateways)
        raw(#","gatewaysOmitted":"#); int(status.gatewaysOmitted)
        raw(#","interfaces":"#); array(status.interfaces) { $0.write($1) }
        raw(#","ipv4":"#); bool(status.ipv4)
        raw(#","ipv4Connectivity":"#); string(status.ipv4Connectivity.rawValue)
        raw(#","ipv6":"#); bool(status.ipv6)
        raw(#","ipv6Connectivity":"#); string(status.ipv6Connectivity.rawValue)
        raw(#","linkQuality":"#); optional(status.linkQuality) { $0.write($1) }
        raw(#","primary":"#); optional(status.primary) { $0.write($1) }
        raw(#","probe":"#); optional(status.probe) { $0.write($1) }
        raw(#","reachable":"#); bool(status.reachable)
        raw(#","routing":"#); array(status.routing) { $0.write($1) }
        raw(#","simulated":"#); bool(status.simulated)
        raw(#","since":"#); timestamp(status.since)
        raw(#","status":"#); string(status.status.rawValue)
        raw(#","vpn":"#); optional(status.vpn) { $0.write($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"addresses":…,"captivePortalApi":…,"carrier":…,"connectivity":…,"dns":…,"index":…,"kind":…,"linkQuality":…,"metered":…,
    /// "name":…,"nat64Prefix":…,"operstate":…,"searchDomains":…,"stall":…,"up":…,"wifi":…}`.
    public mutating func write(_ interface: Interface) {
        raw(#"{"addresses":"#); strings(interface.addresses)
        raw(#","captivePortalApi":"#); optional(interface.captivePortalApi) { $0.string($1) }
        raw(#","carrier":"#); bool(interface.carrier)
        raw(#","connectivity":"#); optional(interface.connectivity) { $0.string($1.rawValue) }
        raw(#","dns":"#); strings(interface.dns)
        raw(#","index":"#); int(interface.index)
        raw(#","kind":"#); string(interface.kind.rawValue)
        raw(#","linkQuality":"#); optional(interface.linkQuality) { $0.write($1) }
        raw(#","metered":"#); bool(interface.metered)
        raw(#","name":"#); string(interface.name)
        raw(#","nat64Prefix":"#); optional(interface.nat64Prefix) { $0.string($1) }
        raw(#","operstate":"#); string(interface.operstate)
        raw(#","searchDomains":"#); strings(interface.searchDomains)
        raw(#","stall":"#); optional(interface.stall) { $0.write($1) }
        raw(#","up":"#); bool(interface.up)
        raw(#","wifi":"#); optional(interface.wifi) { $0.write($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"band":…,"bars":…,"bssid":…,"frequencyMHz":…,"owner":…,"signalDbm":…,"ssid":…,
    /// "strengthPercent":…,"txBitrateKbps":…}`.
    public mutating func write(_ wifi: WiFi) {
        raw(#"{"band":"#); optional(wifi.band) { $0.string($1.rawValue) }
        raw(#","bars":"#); optional(wifi.bars) { $0.int($1) }
        raw(#","bssid":"#); optional(wifi.bssid) { $0.string($1) }
        raw(#","frequencyMHz":"#); optional(wifi.frequencyMHz) { $0.int($1) }
        raw(#","owner":"#); string(wifi.owner.rawValue)
        raw(#","signalDbm":"#); optional(wifi.signalDbm) { $0.int($1) }
        raw(#","ssid":"#); optional(wifi.ssid) { $0.string($1) }
        raw(#","strengthPercent":"#); optional(wifi.strengthPercent) { $0.int($1) }
        raw(#","txBitrateKbps":"#); optional(wifi.txBitrateKbps) { $0.int($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"failRate":…,"method":…,"periodMs":…,"recent":…,"sentSinceReceive":…,"since":…}`.
    public mutating func write(_ stall: DataStall) {
        raw(#"{"failRate":"#); double(stall.failRate)
        raw(#","method":"#); string(stall.method.rawValue)
        raw(#","periodMs":"#); int(stall.periodMs)
        raw(#","recent":"#); array(stall.recent) { $0.write($1) }
        raw(#","sentSinceReceive":"#); int(stall.sentSinceReceive)
        raw(#","since":"#); timestamp(stall.since)
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"at":…,"periodMs":…,"received":…,"retransmitted":…,"sent":…}`.
    public mutating func write(_ dump: DataStall.Dump) {
        raw(#"{"at":"#); timestamp(dump.at)
        raw(#","periodMs":"#); int(dump.periodMs)
        raw(#","received":"#); int(dump.received)
        raw(#","retransmitted":"#); int(dump.retransmitted)
        raw(#","sent":"#); int(dump.sent)
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"downlinkKbps":…,"effectiveType":…,"level":…,"lossPercent":…,"measuredAt":…,"minRttMs":…,
    /// "rttMs":…,"samples":…,"signal":…,"source":…,"stale":…}`.
    public mutating func write(_ quality: LinkQuality) {
        raw(#"{"downlinkKbps":"#); optional(quality.downlinkKbps) { $0.double($1) }
        raw(#","effectiveType":"#); optional(quality.effectiveType) { $0.string($1.rawValue) }
        raw(#","level":"#); string(quality.level.rawValue)
        raw(#","lossPercent":"#); optional(quality.lossPercent) { $0.double($1) }
        raw(#","measuredAt":"#); timestamp(quality.measuredAt)
        raw(#","minRttMs":"#); optional(quality.minRttMs) { $0.double($1) }
        raw(#","rttMs":"#); optional(quality.rttMs) { $0.double($1) }
        raw(#","samples":"#); int(quality.samples)
        raw(#","signal":"#); optional(quality.signal) { $0.write($1) }
        raw(#","source":"#); string(quality.source.rawValue)
        raw(#","stale":"#); bool(quality.stale)
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"level":…,"rsrp":…,"rsrq":…,"rssi":…,"snr":…,"technology":…}`.
    public mutating func write(_ signal: RadioSignal) {
        raw(#"{"level":"#); int(signal.level)
        raw(#","rsrp":"#); optional(signal.rsrp) { $0.double($1) }
        raw(#","rsrq":"#); optional(signal.rsrq) { $0.double($1) }
        raw(#","rssi":"#); optional(signal.rssi) { $0.double($1) }
        raw(#","snr":"#); optional(signal.snr) { $0.double($1) }
        raw(#","technology":"#); string(signal.technology)
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"accessTechnology":…,"generation":…,"interface":…,"modem":…,"roaming":…,"signalQuality":…}`.
    public mutating func write(_ cellular: Cellular) {
        raw(#"{"accessTechnology":"#); optional(cellular.accessTechnology) { $0.string($1) }
        raw(#","generation":"#); optional(cellular.generation) { $0.string($1) }
        raw(#","interface":"#); optional(cellular.interface) { $0.string($1) }
        raw(#","modem":"#); string(cellular.modem)
        raw(#","roaming":"#); optional(cellular.roaming) { $0.bool($1) }
        raw(#","signalQuality":"#); optional(cellular.signalQuality) { $0.int($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"bytesRemaining":…,"canExtendSession":…,"checkedAt":…,"error":…,"failedStage":…,"httpStatus":…,
    /// "ipv4Result":…,"ipv6Result":…,"nat64":…,"portalUrl":…,
    /// "result":…,"rttMs":…,"secondsRemaining":…,"source":…,"url":…,"venueInfoUrl":…}`.
    public mutating func write(_ probe: Probe) {
        raw(#"{"bytesRemaining":"#); optional(probe.bytesRemaining) { $0.int($1) }
        raw(#","canExtendSession":"#); optional(probe.canExtendSession) { $0.bool($1) }
        raw(#","checkedAt":"#); timestamp(probe.checkedAt)
        raw(#","error":"#); optional(probe.error) { $0.string($1) }
        raw(#","failedStage":"#); optional(probe.failedStage) { $0.string($1.rawValue) }
        raw(#","httpStatus":"#); optional(probe.httpStatus) { $0.int($1) }
        raw(#","ipv4Result":"#); optional(probe.ipv4Result) { $0.string($1.rawValue) }
        raw(#","ipv6Result":"#); optional(probe.ipv6Result) { $0.string($1.rawValue) }
        raw(#","nat64":"#); optional(probe.nat64) { $0.bool($1) }
        raw(#","portalUrl":"#); optional(probe.portalUrl) { $0.string($1) }
        raw(#","result":"#); string(probe.result.rawValue)
        raw(#","rttMs":"#); optional(probe.rttMs) { $0.double($1) }
        raw(#","secondsRemaining":"#); optional(probe.secondsRemaining) { $0.int($1) }
        raw(#","source":"#); optional(probe.source) { $0.string($1) }
        raw(#","url":"#); string(probe.url)
        raw(#","venueInfoUrl":"#); optional(probe.venueInfoUrl) { $0.string($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"destination":…,"family":…,"gateway":…,"interface":…,"result":…,"rule":…,"table":…}`.
    public mutating func write(_ path: RoutePath) {
        raw(#"{"destination":"#); string(path.destination)
        raw(#","family":"#); string(path.family.rawValue)
        raw(#","gateway":"#); optional(path.gateway) { $0.string($1) }
        raw(#","interface":"#); optional(path.interface) { $0.string($1) }
        raw(#","result":"#); string(path.result.rawValue)
        raw(#","rule":"#); optional(path.rule) { $0.int($1) }
        raw(#","table":"#); optional(path.table) { $0.int($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"code":…,"detail":…,"interface":…}`.
    public mutating func write(_ reason: Reason) {
        raw(#"{"code":"#); string(reason.code.rawValue)
        raw(#","detail":"#); optional(reason.detail) { $0.string($1) }
        raw(#","interface":"#); optional(reason.interface) { $0.string($1) }
        byte(UInt8(ascii: "}"))
    }

    /// Writes `{"changes":…,"current":…,"event":…,"previous":…,"reason":…,"sequence":…,"timestamp":…}`,
    /// splicing in `previousJSON`/`currentJSON` when given (see `json(_:previousJSON:currentJSON:)`).
    public mutating func write(_ event: ReachabilityEvent, previousJSON: [UInt8]? = nil, currentJSON: [UInt8]? = nil) {
        raw(#"{"changes":"#); strings(event.changes)
        raw(#","current":"#)
        if let currentJSON { raw(currentJSON) } else { write(event.current) }
        raw(#","event":"#); string(event.event.rawValue)
        raw(#","previous":"#)
        if let previous = event.previous {
            if let previousJSON { raw(previousJSON) } else { write(previous) }
        } else {
            raw("null")
        }
        raw(#","reason":"#); write(event.reason)
        raw(#","sequence":"#); int(event.sequence)
        raw(#","timestamp":"#); timestamp(event.timestamp)
        byte(UInt8(ascii: "}"))
    }

    // MARK: values

    /// Appends bytes that are already JSON (or a piece of it) as they are.
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        // A literal's bytes are where the pointer says: no closure, no check of each scalar.
        if text.hasPointerRepresentation {
            append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        } else {
            text.withUTF8Buffer { append($0) }
        }
    }

    /// Appends already-written JSON bytes as they are.
    public mutating func raw(_ json: [UInt8]) {
        json.withUnsafeBufferPointer { append($0) }
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        reserve(1)
        (base + count).initialize(to: value)
        count += 1
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    mutating func optional<T>(_ value: T?, _ body: (inout WireJSONWriter, T) -> Void) {
        if let value { body(&self, value) } else { raw("null") }
    }

    /// `[…]`: each of `values` written by `body`, separated by commas.
    mutating func array<T>(_ values: [T], _ body: (inout WireJSONWriter, T) -> Void) {
        byte(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { byte(UInt8(ascii: ",")) }
            body(&self, value)
        }
        byte(UInt8(ascii: "]"))
    }

    mutating func strings(_ values: [String]) {
        array(values) { $0.string($1) }
    }

    /// A decimal integer.
    public mutating func int(_ value: Int) {
        // Digits from the right into a buffer on the stack, then one append.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var magnitude = value.magnitude
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { byte(UInt8(ascii: "-")) }
            append(UnsafeBufferPointer(rebasing: buffer[start..<20]))
        }
    }

    /// A number as `JSONEncoder` writes a Double: its shortest round-trip form, without a `.0`
    /// suffix. Not finite: `null` (JSON has no such numbers).
    public mutating func double(_ value: Double) {
        guard value.isFinite else { raw("null"); return }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { append($0) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string (RFC 8259 §7): `"` and `\` escaped, control characters as `\b \f \n \r \t`
    /// or `\u00XX`; everything else, `/` and non-ASCII included, as its UTF-8 bytes.
    public mutating func string(_ value: String) {
        // Native strings (all that reachd makes) lend their bytes in place; others are copied once.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { escaped($0) }
        if written == nil {
            var copy = value
            copy.withUTF8 { escaped($0) }
        }
    }

    /// `utf8` as a JSON string. Room for the quotes and every byte as it is is made first, and a
    /// string with nothing to escape (a name, an address: nearly every one) is copied in the
    /// same pass that looks at its bytes; from the first byte to escape on, `escaped(_:from:)`.
    private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        var out = base + count
        out.initialize(to: UInt8(ascii: "\""))
        out += 1
        for position in utf8.indices {
            let c = utf8[position]
            if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
                count = out - base
                return escaped(utf8, from: position)
            }
            out.initialize(to: c)
            out += 1
        }
        out.initialize(to: UInt8(ascii: "\""))
        count = out + 1 - base
    }

    /// The rest of `utf8` from `start` (the opening quote written), then the closing quote: the
    /// runs between characters that need escaping appended whole.
    private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int) {
        var start = start
        while start < utf8.count {
            let next = Self.firstToEscape(in: utf8, from: start)
            if start < next { append(UnsafeBufferPointer(rebasing: utf8[start..<next])) }
            guard next < utf8.count else { break }
            let c = utf8[next]
            start = next + 1
            byte(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""): byte(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): byte(UInt8(ascii: "\\"))
            case 0x08: byte(UInt8(ascii: "b"))
            case 0x0C: byte(UInt8(ascii: "f"))
            case 0x0A: byte(UInt8(ascii: "n"))
            case 0x0D: byte(UInt8(ascii: "r"))
            case 0x09: byte(UInt8(ascii: "t"))
            default:
                raw("u00")
                byte(Self.hexDigits[Int(c >> 4)])
                byte(Self.hexDigits[Int(c & 0x0F)])
            }
        }
        byte(UInt8(ascii: "\""))
    }

    /// The position of the first byte at or after `start` that a JSON string must escape (a
    /// control character, `"` or `\`), or `utf8.count`.
    static func firstToEscape(in utf8: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var position = start
        while position < utf8.count {
            let c = utf8[position]
            if c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { return position }
            position += 1
        }
        return position
    }

    /// A wire timestamp as a JSON string, exactly as `Timestamp.string(from:)` formats it
    /// (`"2026-11-29T13:00:00.120Z"`: UTC, milliseconds truncated), without a date formatter.
    public mutating func timestamp(_ date: Date) {
        // From the reference date, as Foundation's formatter computes, so the truncation of the
        // milliseconds agrees to the last bit.
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 2.0e11 else {
            // Far outside any real clock: leave it to Foundation.
            string(Timestamp.string(from: date)); return
        }
        let seconds = interval.rounded(.down)
        let milliseconds = min(999, Int((interval - seconds) * 1000))
        let total = Int(seconds) + 978_307_200 // seconds since 1970
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        // Foundation's calendar is Julian before 1582; real clocks are far from both ends.
        guard year >= 1900 && year <= 9999 else { string(Timestamp.string(from: date)); return }
        // `"YYYY-MM-DDTHH:MM:SS.mmmZ"`: 26 bytes written on the stack, then one append.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 26) { text in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var rest = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                }
            }
            text[0] = UInt8(ascii: "\""); put(year, 4, at: 1); text[5] = UInt8(ascii: "-")
            put(month, 2, at: 6); text[8] = UInt8(ascii: "-"); put(day, 2, at: 9)
            text[11] = UInt8(ascii: "T"); put(secondOfDay / 3600, 2, at: 12); text[14] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 15); text[17] = UInt8(ascii: ":"); put(secondOfDay % 60, 2, at: 18)
            text[20] = UInt8(ascii: "."); put(milliseconds, 3, at: 21)
            text[24] = UInt8(ascii: "Z"); text[25] = UInt8(ascii: "\"")
            append(UnsafeBufferPointer(text))
        }
    }

    /// The proleptic Gregorian date of a day number (days since 1970-01-01), after Howard
    /// Hinnant's `civil_from_days`.
    static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
