import CSystemd
import ReachabilityCore
#if canImport(Glibc)
import Glibc
#endif

extension DBusValue {
    /// The D-Bus signature of this value; nil when it cannot be told from the value (an empty
    /// array, an array whose elements differ in type), which a message cannot carry.
    var signature: String? {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case let .array(elements):
            elementSignature(elements).map { "a" + $0 }
        case let .dictEntry(key, value):
            key.signature.flatMap { key in value.signature.map { "{" + key + $0 + "}" } }
        case let .structure(fields):
            fields.isEmpty ? nil : fieldSignatures(fields).map { "(" + $0 + ")" }
        }
    }
}

/// The one signature all `elements` share, nil when they are none or differ.
private func elementSignature(_ elements: [DBusValue]) -> String? {
    guard let first = elements.first?.signature, elements.allSatisfy({ $0.signature == first }) else { return nil }
    return first
}

/// The signatures of `fields` in a row, nil when one has none.
private func fieldSignatures(_ fields: [DBusValue]) -> String? {
    let signatures = fields.compactMap(\.signature)
    return signatures.count == fields.count ? signatures.joined() : nil
}

extension SDBusMessage {
    /// Appends any value, containers included (`sd_bus_message_append_basic`,
    /// `sd_bus_message_open_container`, `sd_bus_message_close_container`). A value without a
    /// signature (an empty array) is refused with EINVAL before anything is appended.
    func append(_ value: DBusValue) throws(SDBusError) {
        guard let signature = value.signature else {
            throw SDBusError(function: "sd_bus_message_append(\(value))", errno: EINVAL)
        }
        switch value {
        case let .byte(v): try appendBasic("y", v)
        case let .bool(v): try appendBasic("b", Int32(v ? 1 : 0))   // sd-bus takes `b` as int
        case let .int16(v): try appendBasic("n", v)
        case let .uint16(v): try appendBasic("q", v)
        case let .int32(v): try appendBasic("i", v)
        case let .uint32(v): try appendBasic("u", v)
        case let .int64(v): try appendBasic("x", v)
        case let .uint64(v): try appendBasic("t", v)
        case let .double(v): try appendBasic("d", v)
        case let .unixFD(v): try appendBasic("h", v)
        case let .string(text), let .objectPath(text), let .signature(text):
            let result = text.withCString { sd_bus_message_append_basic(pointer, CChar(signature.utf8.first ?? 0), $0) }
            guard result >= 0 else { throw SDBusError("sd_bus_message_append_basic", result) }
        case let .variant(inner):
            try container("v", contents: inner.signature ?? "") { () throws(SDBusError) in try append(inner) }
        case let .array(elements):
            try container("a", contents: String(signature.dropFirst())) { () throws(SDBusError) in
                for element in elements { try append(element) }
            }
        case let .dictEntry(key, entry):
            try container("e", contents: String(signature.dropFirst().dropLast())) { () throws(SDBusError) in
                try append(key)
                try append(entry)
            }
        case let .structure(fields):
            try container("r", contents: String(signature.dropFirst().dropLast())) { () throws(SDBusError) in
                for field in fields { try append(field) }
            }
        }
    }

    private func appendBasic<T>(_ type: Unicode.Scalar, _ value: T) throws(SDBusError) {
        let result = withUnsafePointer(to: value) { sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: type)), $0) }
        guard result >= 0 else { throw SDBusError("sd_bus_message_append_basic", result) }
    }

    private func container(_ type: Unicode.Scalar, contents: String,
                           _ body: () throws(SDBusError) -> Void) throws(SDBusError) {
        var result = contents.withCString { sd_bus_message_open_container(pointer, CChar(UInt8(ascii: type)), $0) }
        guard result >= 0 else { throw SDBusError("sd_bus_message_open_container", result) }
        try body()
        result = sd_bus_message_close_container(pointer)
        guard result >= 0 else { throw SDBusError("sd_bus_message_close_container", result) }
    }
}
