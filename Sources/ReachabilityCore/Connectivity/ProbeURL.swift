import FoundationEssentials

/// The connectivity check's `URL=`, taken apart for a plain-socket HTTP/1.1 GET.
///
/// `http`, or `https` (`isHTTPS`: the check speaks TLS first, the certificate verified).
public struct ProbeURL: Equatable, Sendable {
    /// The URL as configured.
    public var string: String
    /// `http` or `https`, lower case.
    public var scheme: String
    /// The host name or address literal, without the brackets of an IPv6 literal.
    public var host: String
    public var port: Int
    /// Path and query, as sent on the request line (`/generate_204?x=1`); `/` when the URL has no path.
    public var requestTarget: String
    /// The `Host:` header value: the host (bracketed when IPv6) with `:port` when not the default.
    public var hostHeader: String

    public var isHTTPS: Bool { scheme == "https" }

    /// Parses `string`; throws `ProbeURLError` naming what is wrong.
    public init(_ string: String) throws(ProbeURLError) {
        let trimmed = string.trimmingWhitespace
        guard let components = URLComponents(string: trimmed), let rawScheme = components.scheme else {
            throw ProbeURLError(url: string, problem: "not an absolute URL")
        }
        let scheme = rawScheme.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw ProbeURLError(url: string, problem: "scheme \(rawScheme) is not http or https")
        }
        guard var host = components.percentEncodedHost, !host.isEmpty else {
            throw ProbeURLError(url: string, problem: "no host")
        }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65535).contains(port) else {
            throw ProbeURLError(url: string, problem: "port \(port) out of range")
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        let hostPart = bracketed || host.contains(":") ? "[\(host)]" : host
        self.string = trimmed
        self.scheme = scheme
        self.host = host
        self.port = port
        self.requestTarget = target
        self.hostHeader = port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    /// The request reachd sends: no redirects followed, no caches, connection closed after.
    public var requestBytes: [UInt8] { requestBytes(accept: nil) }

    /// The request with an `Accept:` header (`application/captive+json` for a captive-portal API).
    public func requestBytes(accept: String?) -> [UInt8] {
        Array(("GET \(requestTarget) HTTP/1.1\r\n" +
               "Host: \(hostHeader)\r\n" +
               (accept.map { "Accept: \($0)\r\n" } ?? "") +
               "Connection: close\r\n" +
               "Cache-Control: no-cache\r\n" +
               "User-Agent: reachd/0.1\r\n" +
               "\r\n").utf8)
    }

    /// `location` (a `Location:` header, possibly relative) resolved against this URL.
    public func resolve(_ location: String) -> String {
        let trimmed = location.trimmingWhitespace
        guard let base = URL(string: string), let resolved = URL(string: trimmed, relativeTo: base) else {
            return trimmed
        }
        return resolved.absoluteString
    }
}

/// A `URL=` that cannot be probed: the URL and what is wrong with it.
public struct ProbeURLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var url: String
    public var problem: String
    public var description: String { "connectivity URL \(url): \(problem)" }
}
