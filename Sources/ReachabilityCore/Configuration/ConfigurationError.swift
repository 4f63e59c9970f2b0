/// A configuration file reachd cannot use: names the file, the line and the key, and says why.
///
/// `description` is the one-line form reachd logs and `reachd --check-config` prints, e.g.
/// `/etc/reachd/reachd.conf:12: [Connectivity] Interval=abc: bad number (expected seconds, e.g. 300 or 5min)`.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file as it was opened.
    public var file: String
    /// 1-based line number; nil when the whole file is at fault (cannot be read).
    public var line: Int?
    /// The section of the offending assignment, when there is one.
    public var section: String?
    /// The offending key, when there is one.
    public var key: String?
    /// The offending value, when there is one.
    public var value: String?
    /// What is wrong, in words.
    public var message: String

    public init(file: String, line: Int? = nil, section: String? = nil, key: String? = nil,
                value: String? = nil, message: String) {
        self.file = file; self.line = line; self.section = section; self.key = key
        self.value = value; self.message = message
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let section { text += "[\(section)] " }
        if let key {
            text += "\(key)=\(value ?? ""): "
        }
        return text + message
    }
}
