import FoundationEssentials

/// The captive-portal API of RFC 8908: what its JSON answer says, and the verdict that follows
/// from it together with the ordinary HTTP check.
///
/// The checker GETs the URI a router announced (RFC 8910) over https with
/// `Accept: application/captive+json`, then runs the ordinary check, which is the evidence:
/// anyone on the link can announce an API of their own, so `captive: true` is a portal (the user
/// logs in at `user-portal-url`) only when the ordinary check did not get its expected answer;
/// `captive: false` lets the ordinary check confirm the internet, and the API's session facts
/// (time and bytes left) ride along in the probe. An API that does not
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

    /// The verdict of a check that asked the API (`api`, what it said or why it was no answer)
    /// and then ran the ordinary check (`checked`). The ordinary check is the evidence:
    /// - `captive: true` and the check got something else than its expected answer (a redirect,
    ///   no answer): a portal, as the API describes it;
    /// - `captive: true` but the check got its expected answer: `full`, the API not believed —
    ///   `disagreement` is then the note in `probe.error` (for the log);
    /// - otherwise the check's verdict with the API's facts or why it was not used (`merge`).
    public static func verdict(_ api: Result<State, Failure>, api uri: String, apiRttMs: Double?, checked: Probe,
                               checkedAt: Date) -> (probe: Probe, disagreement: String?) {
        guard case .success(let state) = api, state.captive else { return (merge(api, api: uri, into: checked), nil) }
        switch checked.result {
        case .full:
            var probe = checked
            let note = "captive-portal API \(ProbeVerdict.shown(uri)) says captive, but \(ProbeVerdict.shown(checked.url)) "
                + "got its expected answer: the check decides"
            probe.error = probe.error.map { "\(note); \($0)" } ?? note
            return (probe, note)
        case .portal, .limited, .unknown, .none:
            return (portal(state, api: uri, rttMs: apiRttMs, checkedAt: checkedAt), nil)
        }
    }

    /// The verdict of a captive API that says `captive: true`, as a portal.
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
