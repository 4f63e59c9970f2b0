import FoundationEssentials

extension Status {
    /// The data stall on the path: the primary's, else the VPN's on top of it (both are the
    /// path's links, and a stall on either leaves the apps' traffic unanswered); nil when
    /// neither has one. What `reachctl status`, `Path.isStalled`, `REACHD_STALL` and the GIO
    /// module show; a standby uplink's stall is its own (`Interface.stall`).
    public var pathStall: DataStall? {
        primary?.stall ?? vpn?.stall
    }
}
