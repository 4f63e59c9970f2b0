/// The file access the configuration loaders need, so that Core stays free of I/O: the real
/// one is `FileSystemConfigurationFiles` in ReachabilityHost, tests use a dictionary.
public protocol ConfigurationFileSource {
    /// The contents of the file at `path`, or nil when it does not exist.
    /// - Throws: `ConfigurationError` (file set, no line) when it exists but cannot be read.
    func contents(of path: String) throws(ConfigurationError) -> String?
    /// The names (not paths) of the regular files in `directory`; empty when it does not exist.
    func fileNames(in directory: String) throws(ConfigurationError) -> [String]
}

extension ConfigurationFileSource {
    /// The drop-ins of `mainFile` that exist, in the order they are applied: `*.conf` in
    /// lexical (byte) order; hidden files are skipped.
    public func dropIns(for mainFile: String) throws(ConfigurationError) -> [String] {
        let directory = ReachdConfiguration.dropInDirectory(for: mainFile)
        return try fileNames(in: directory)
            .filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { directory + "/" + $0 }
    }

    /// The one way reachd.conf and dispatcher.conf are read: the main file, then its drop-ins
    /// (`dropIns(for:)`), each with its text, in the order they apply (each overrides what came
    /// before). A missing main file is no file (the defaults), unless `mustExist`; a drop-in
    /// that vanished between listing and reading is simply not there.
    ///
    /// - Throws: `ConfigurationError` for a file that cannot be read, or a missing main file
    ///   that `mustExist`.
    public func files(mainFile: String, mustExist: Bool) throws(ConfigurationError) -> [(file: String, text: String)] {
        var result: [(file: String, text: String)] = []
        if let text = try contents(of: mainFile) {
            result.append((mainFile, text))
        } else if mustExist {
            throw ConfigurationError(file: mainFile, message: "no such file")
        }
        for file in try dropIns(for: mainFile) {
            if let text = try contents(of: file) { result.append((file, text)) }
        }
        return result
    }
}
