/// The wire JSON of each interface as last written, by interface index.
///
/// Every event carries the whole interface list twice (`previous` and `current`), yet a change
/// touches one interface, rarely more: the others are spliced in as the bytes written before,
/// after a comparison of the values instead of escaping and formatting them again. The bytes are
/// those `WireJSONWriter.write(_: Interface)` writes for an equal value, so the output does not
/// change.
public struct InterfaceJSONCache: Sendable {
    /// One interface and its bytes; a class, so that looking one up retains one object rather
    /// than copying the interface's strings and the bytes out of the dictionary.
    private final class Entry: Sendable {
        let interface: Interface
        let json: [UInt8]
        init(_ interface: Interface, _ json: [UInt8]) { self.interface = interface; self.json = json }
    }

    private var entries: [Int: Entry] = [:]

    public init() {}

    /// The JSON object of `interface`: the cached bytes when the value is the one cached for its
    /// index, else freshly written and kept.
    public mutating func json(for interface: Interface) -> [UInt8] {
        if let entry = entries[interface.index], entry.interface == interface { return entry.json }
        var writer = WireJSONWriter(capacity: 192)
        writer.write(interface)
        let json = writer.bytes
        entries[interface.index] = Entry(interface, json)
        return json
    }

    /// Forgets the interfaces `status` no longer lists, so that removed links do not pile up.
    mutating func keepOnly(_ status: Status) {
        guard entries.count > status.interfaces.count else { return }
        let listed = Set(status.interfaces.map(\.index))
        entries = entries.filter { listed.contains($0.key) }
    }

    /// How many interfaces are cached.
    public var count: Int { entries.count }
}
