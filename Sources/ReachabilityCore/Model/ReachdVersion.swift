/// The version of reachd and reachctl (`--version`, `GetInfo`).
public enum ReachdVersion {
    public static let string = "0.1.0"
    public static let url = "https://github.com/reachd/reachd"
}
