import FoundationEssentials

/// The captive-portal API of RFC 8908: what its JSON answer says, and the verdict that follows
/// from it together with the ordinary HTTP check.
///
/// The checker GETs the URI a router announced (RFC 8910) over https with
/// `Accept: application/captive+json`. `captive: true` is a portal at once (the user logs in at
/// `user-portal-url`); `captive: false` lets the ordinary check confirm the internet, and the
/// API's session facts (time and bytes left) ride along in the probe. An API that does not
/// answer as the RFC says is no answer: the ordinary check decides, and the probe's `error`
/// says why the API was not used.
public enum CaptivePortalAPI {
    /// The media type of the API's answers.
    public static let mediaType = "application/captive+json"
    /// The largest answer read, in bytes; a longer one is broken (real answers are a few hundred bytes).
    public static let maxBytes = 16 * 1024
    /// How deep an answer may nest: the RFC's fields are all at the top, and vendors' extensions
    /// a few levels below.
    public static let maxNesting = 8
    /// The probe's `source` when an API answered.
    public static let source = "ra"

    /// What the API said (RFC 8908 §5).
    public struct State: Equatable, Sendable {
        public var captive: Bool
        /// `user-portal-url`: where the user logs in (an https URL, else left out).
        public var userPortalUrl: String?
        /// `venue-info-url` (an https URL, else left out).
        public var venueInfoUrl: String?
        public var canExtendSession: Bool?
        public var secondsRemaining: Int?
        public var bytesRemaining: Int?

        public init(captive: Bool, userPortalUrl: String? = nil, venueInfoUrl: String? = nil, canExtendSession: Bool? = nil,
                    secondsRemaining: Int? = nil, bytesRemaining: Int? = nil) {
            self.captive = captive; self.userPortalUrl = userPortalUrl; self.venueInfoUrl = venueInfoUrl
            self.canExtendSession = canExtendSession; self.secondsRemaining = secondsRemaining; self.bytesRemaining = bytesRemaining
        }
    }

    /// Why an answer is not one the RFC allows.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The state in an HTTP answer: status 200 with a JSON object that has a boolean `captive`.
    public static func state(of response: HTTPResponse) -> Result<State, Failure> {
        guard response.status == 200 else { return .failure(Failure("answered HTTP \(response.status), not 200")) }
        guard !response.bodyTruncated, response.body.count <= maxBytes else {
            return .failure(Failure("answer longer than \(maxBytes) bytes"))
        }
        return state(json: response.body)
    }

    /// The state in a JSON text of at most `maxBytes`.
    public static func state(json bytes: [UInt8]) -> Result<State, Failure> {
        guard bytes.count <= maxBytes else { return .failure(Failure("answer longer than \(maxBytes) bytes")) }
        let value: JSONValue
        do {
            // reachd's own parser: linear in the bytes, nesting bounded; an API's answer nests 1 deep.
            value = try JSONParser.parse(bytes, maxDepth: maxNesting)
        } catch {
            return .failure(Failure("answer is not JSON (\(error))"))
        }
        guard let object = value.objectValue else { return .failure(Failure("answer is not a JSON object")) }
        guard let captiveValue = object["captive"] else { return .failure(Failure("answer has no \"captive\"")) }
        guard let captive = captiveValue.boolValue else { return .failure(Failure("\"captive\" is not true or false")) }
        func url(_ key: String) -> String? {
            guard let text = object[key]?.stringValue, text.lowercased().hasPrefix("https://") else { return nil }
            return ProbeVerdict.portalURL(text)
        }
        func count(_ key: String) -> Int? {
            guard let number = object[key]?.intValue, number >= 0 else { return nil }
            return number
        }
        return .success(State(captive: captive, userPortalUrl: url("user-portal-url"), venueInfoUrl: url("venue-info-url"),
                              canExtendSession: object["can-extend-session"]?.boolValue,
                              secondsRemaining: count("seconds-remaining"), bytesRemaining: count("bytes-remaining")))
    }

    /// The outcome of one API request, as the checker saw it.
    public static func state(of outcome: ProbeOutcome) -> Result<State, Failure> {
        switch outcome {
        case .response(let response): return state(of: response)
        case .failure(let failure): return .failure(Failure(failure.message))
        }
    }

    /// The verdict of a captive API that says `captive: true`: a portal, no other check needed.
    public static func portal(_ state: State, api: String, rttMs: Double?, checkedAt: Date) -> Probe {
        Probe(url: api, result: .portal, httpStatus: 200, rttMs: rttMs, portalUrl: state.userPortalUrl,
              error: nil, checkedAt: checkedAt, venueInfoUrl: state.venueInfoUrl,
              secondsRemaining: state.secondsRemaining, bytesRemaining: state.bytesRemaining,
              canExtendSession: state.canExtendSession, source: source)
    }

    /// The ordinary check's verdict `checked`, with what the API said: its session facts when it
    /// answered (`captive: false`), else why it was passed over.
    public static func merge(_ api: Result<State, Failure>, api uri: String, into checked: Probe) -> Probe {
        var probe = checked
        switch api {
        case .success(let state):
            probe.venueInfoUrl = state.venueInfoUrl
            probe.secondsRemaining = state.secondsRemaining
            probe.bytesRemaining = state.bytesRemaining
            probe.canExtendSession = state.canExtendSession
            probe.source = source
        case .failure(let failure):
            let note = "captive-portal API \(ProbeVerdict.shown(uri)) not used: \(TerminalText.escaped(failure.message))"
            probe.error = probe.error.map { "\(note); \($0)" } ?? note
        }
        return probe
    }

    /// When to ask again while a session runs out in `seconds`: shortly before its end (a tenth of
    /// it, at least a second and at most a minute before), so apps hear of it before the network
    /// cuts them off; and at once when it has ended.
    public static func recheckDelay(secondsRemaining seconds: Int) -> TimeInterval {
        let total = TimeInterval(seconds)
        let margin = min(60, max(1, total / 10))
        return max(0.5, total - margin)
    }

    /// True for an API URI the check asks: an https URL (the unrestricted URN never gets here).
    public static func isUsable(_ uri: String) -> Bool {
        guard let url = try? ProbeURL(uri) else { return false }
        return url.isHTTPS
    }
}
