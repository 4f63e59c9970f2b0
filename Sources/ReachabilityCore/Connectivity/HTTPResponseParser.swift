/// Incremental parser of one HTTP/1.x response: bytes in as they arrive, the response out once
/// it is complete (Content-Length reached, last chunk seen, or — for a body delimited by the
/// close of the connection — `finish()` at end of stream).
///
/// Bodies are capped (`maxBodyBytes`): the probe only needs the start of a page, and a portal
/// that streams forever must not grow memory. Interim responses (1xx) are skipped.
public struct HTTPResponseParser: Sendable {
    public let maxHeaderBytes: Int
    public let maxBodyBytes: Int

    private enum Framing: Sendable {
        case length(Int)
        case chunked(ChunkState)
        case untilClose
    }

    private enum ChunkState: Sendable {
        case size
        case data(Int)
        case dataEnd
        case trailers
    }

    private var head: [UInt8] = []
    private var response: HTTPResponse?
    private var framing: Framing = .untilClose
    /// Bytes of the current line in chunked framing (size lines, CRLFs, trailers).
    private var line: [UInt8] = []
    private var done = false

    public init(maxBodyBytes: Int = 64 * 1024, maxHeaderBytes: Int = 16 * 1024) {
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Feeds received bytes; returns the response once it is complete (later bytes are ignored).
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPResponse? {
        if done { return response }
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if response == nil {
                head.append(bytes[index])
                index = bytes.index(after: index)
                if head.count > maxHeaderBytes { throw HTTPParseError("response header longer than \(maxHeaderBytes) bytes") }
                if head.hasSuffix([13, 10, 13, 10]) || head.hasSuffix([10, 10]) {
                    try parseHead()
                    if done { return response }
                }
                continue
            }
            let rest = bytes[index...]
            let consumed = try consumeBody(rest)
            index = bytes.index(index, offsetBy: consumed)
            if done { return response }
        }
        return nil
    }

    /// The connection closed: returns the response when that completes it, else throws.
    public mutating func finish() throws(HTTPParseError) -> HTTPResponse {
        if done, let response { return response }
        guard var response else {
            throw HTTPParseError(head.isEmpty ? "connection closed without a response" : "connection closed inside the response header")
        }
        switch framing {
        case .untilClose:
            done = true
            return response
        case .length(let remaining):
            throw HTTPParseError("connection closed \(remaining) bytes before the end of the body")
        case .chunked:
            // Keep what arrived: a portal page cut short is still a portal page.
            response.bodyTruncated = true
            done = true
            self.response = response
            return response
        }
    }

    private mutating func parseHead() throws(HTTPParseError) {
        // Split on bytes: in a Swift String "\r\n" is one Character and would not split on "\n".
        var lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }
        head.removeAll()
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let statusLine = lines.first else { throw HTTPParseError("empty status line") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
              let status = Int(parts[1]), (100...999).contains(status) else {
            throw HTTPParseError("not an HTTP/1.x status line: \(statusLine.prefix(80))")
        }
        if (100...199).contains(status) { return }  // interim; the real response follows
        var headers: [HTTPResponse.Header] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw HTTPParseError("malformed header line: \(line.prefix(80))") }
            headers.append(.init(name: String(line[..<colon]).trimmingSpaces,
                                 value: String(line[line.index(after: colon)...]).trimmingSpaces))
        }
        let parsed = HTTPResponse(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
        response = parsed
        if status == 204 || status == 304 {
            framing = .length(0)
        } else if let encoding = parsed.header("Transfer-Encoding"), encoding.lowercased().contains("chunked") {
            framing = .chunked(.size)
        } else if let lengthText = parsed.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else { throw HTTPParseError("bad Content-Length: \(lengthText)") }
            framing = .length(length)
        } else {
            framing = .untilClose
        }
        if case .length(0) = framing { done = true }
    }

    /// Appends body bytes up to the cap; returns false when the cap is reached.
    private mutating func appendBody(_ bytes: some Collection<UInt8>) -> Bool {
        guard var current = response else { return false }
        let room = maxBodyBytes - current.body.count
        if bytes.count > room {
            current.body.append(contentsOf: bytes.prefix(room))
            current.bodyTruncated = true
            response = current
            return false
        }
        current.body.append(contentsOf: bytes)
        response = current
        return true
    }

    /// Consumes body bytes from `bytes`; returns how many it used.
    private mutating func consumeBody(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> Int {
        switch framing {
        case .untilClose:
            if !appendBody(bytes) { done = true }
            return bytes.count
        case .length(let remaining):
            let take = min(remaining, bytes.count)
            let fits = appendBody(bytes.prefix(take))
            framing = .length(remaining - take)
            if !fits || remaining - take == 0 { done = true }
            return take
        case .chunked(let state):
            return try consumeChunked(bytes, state: state)
        }
    }

    private mutating func consumeChunked(_ bytes: some Collection<UInt8>, state: ChunkState) throws(HTTPParseError) -> Int {
        switch state {
        case .data(let remaining):
            let take = min(remaining, bytes.count)
            if !appendBody(bytes.prefix(take)) { done = true; return take }
            framing = .chunked(remaining - take == 0 ? .dataEnd : .data(remaining - take))
            return take
        case .size, .dataEnd, .trailers:
            // Line-oriented states: take one byte at a time up to the end of the line.
            guard let byte = bytes.first else { return 0 }
            line.append(byte)
            if line.count > 1024 { throw HTTPParseError("chunk line longer than 1024 bytes") }
            guard byte == 10 else { return 1 }
            let text = String(decoding: line, as: UTF8.self).trimmingSpaces
            line.removeAll()
            switch state {
            case .size:
                let sizeText = text.split(separator: ";", maxSplits: 1).first.map(String.init)?.trimmingSpaces ?? ""
                guard let size = Int(sizeText, radix: 16), size >= 0 else { throw HTTPParseError("bad chunk size: \(text.prefix(40))") }
                framing = .chunked(size == 0 ? .trailers : .data(size))
            case .dataEnd:
                guard text.isEmpty else { throw HTTPParseError("chunk not followed by CRLF") }
                framing = .chunked(.size)
            case .trailers:
                if text.isEmpty { done = true }
            case .data:
                break
            }
            return 1
        }
    }
}

/// The response could not be parsed: what was wrong.
public struct HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Array where Element == UInt8 {
    fileprivate func hasSuffix(_ suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line ends (no Foundation needed).
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
