import Testing
@testable import ReachabilityCore

struct ParserCase: CustomTestStringConvertible, Sendable {
    let name: String
    let wire: String
    /// Complete before the end of the stream (no `finish()` needed).
    let completeEarly: Bool
    let status: Int?
    var body = ""
    var truncated = false
    var location: String?
    var cap = 64 * 1024
    var testDescription: String { name }
}

let parserCases: [ParserCase] = [
    ParserCase(name: "204", wire: "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", completeEarly: true, status: 204),
    ParserCase(name: "content-length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", completeEarly: true, status: 200, body: "hello"),
    ParserCase(name: "content-length zero", wire: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", completeEarly: true, status: 200),
    ParserCase(name: "extra bytes after content-length ignored", wire: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiTRAILING", completeEarly: true, status: 200, body: "hi"),
    ParserCase(name: "until close", wire: "HTTP/1.0 200 OK\r\n\r\nall of it", completeEarly: false, status: 200, body: "all of it"),
    ParserCase(name: "chunked", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: y\r\n\r\n",
               completeEarly: true, status: 200, body: "hello, world"),
    ParserCase(name: "redirect with location", wire: "HTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n",
               completeEarly: true, status: 302, location: "/login"),
    ParserCase(name: "bare LF line ends", wire: "HTTP/1.1 302 Found\nlocation:  http://p/x \nContent-Length: 0\n\n",
               completeEarly: true, status: 302, location: "http://p/x"),
    ParserCase(name: "interim 100 skipped", wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", completeEarly: true, status: 204),
    ParserCase(name: "body capped", wire: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", completeEarly: true, status: 200,
               body: "0123", truncated: true, cap: 4),
    ParserCase(name: "until-close body capped", wire: "HTTP/1.1 200 OK\r\n\r\n0123456789", completeEarly: true, status: 200,
               body: "012", truncated: true, cap: 3),
    ParserCase(name: "chunked body capped", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n",
               completeEarly: true, status: 200, body: "01234", truncated: true, cap: 5),
    ParserCase(name: "chunked cut short keeps what came", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nlogi",
               completeEarly: false, status: 200, body: "logi", truncated: true),
    ParserCase(name: "closed before the body ended", wire: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", completeEarly: false, status: nil),
    ParserCase(name: "closed inside the header", wire: "HTTP/1.1 200 OK\r\nConte", completeEarly: false, status: nil),
    ParserCase(name: "nothing at all", wire: "", completeEarly: false, status: nil),
    ParserCase(name: "not HTTP", wire: "SSH-2.0-OpenSSH_9.2\r\n\r\n", completeEarly: false, status: nil),
    ParserCase(name: "bad content-length", wire: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", completeEarly: false, status: nil),
    ParserCase(name: "bad chunk size", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", completeEarly: false, status: nil),
]

@Suite struct HTTPResponseParserTests {
    /// Feeds the wire text in one piece and byte by byte: the result must not depend on how TCP splits it.
    @Test(arguments: parserCases, [false, true])
    func parse(_ c: ParserCase, byteByByte: Bool) {
        var parser = HTTPResponseParser(maxBodyBytes: c.cap)
        let bytes = Array(c.wire.utf8)
        var early: HTTPResponse?
        var failed = false
        do {
            if byteByByte {
                for byte in bytes where early == nil { early = try parser.feed([byte]) }
            } else {
                early = try parser.feed(bytes)
            }
        } catch { failed = true }
        #expect((early != nil) == c.completeEarly)
        var final = early
        if final == nil && !failed { final = try? parser.finish() }
        #expect(final?.status == c.status)
        guard let final else { return }
        #expect(String(decoding: final.body, as: UTF8.self) == c.body)
        #expect(final.bodyTruncated == c.truncated)
        #expect(final.header("LOCATION") == c.location)
    }
}
