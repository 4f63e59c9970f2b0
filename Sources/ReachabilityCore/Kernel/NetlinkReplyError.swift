/// Names the netlink protocol whose reply a `NetlinkReplyError` is about, for its description.
/// The readers themselves conform (`SockDiagReply`, `NL80211Reply`).
public protocol NetlinkReplyProtocol: Sendable {
    /// The protocol as users know it (`sock_diag`, `nl80211`).
    static var protocolName: String { get }
    /// What was asked of the kernel (`dump`, `request`).
    static var requestNoun: String { get }
    /// What the kernel sends back (`dump`, `reply`).
    static var replyNoun: String { get }
}

/// What stopped a netlink reply from being read. Generic over the protocol only so that each
/// reader keeps an error type of its own (`SockDiagError`, `NL80211ReplyError`) while the
/// framing checks that throw it are shared (`NetlinkMessageWalk`).
public enum NetlinkReplyError<P: NetlinkReplyProtocol>: Error, Equatable, Sendable, CustomStringConvertible {
    /// The kernel refused the request (`NLMSG_ERROR`, or an error in `NLMSG_DONE`): the positive
    /// errno.
    case kernel(errno: Int32)
    /// The framing does not add up: the rest of the datagram cannot be read.
    case malformed(offset: Int, problem: String)
    /// The kernel dropped messages (`NLMSG_OVERRUN`): the reply is incomplete.
    case overrun

    public var description: String {
        switch self {
        case .kernel(let errno): return "\(P.protocolName): the kernel refused the \(P.requestNoun) (errno \(errno))"
        case .malformed(let offset, let problem): return "\(P.protocolName): malformed reply at byte \(offset): \(problem)"
        case .overrun: return "\(P.protocolName): the kernel dropped part of the \(P.replyNoun) (overrun)"
        }
    }
}
