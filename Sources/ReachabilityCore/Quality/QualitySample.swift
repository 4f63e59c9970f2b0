import FoundationEssentials

/// One measurement of an uplink: one TCP socket's figures between two sock_diag dumps, the
/// users' sockets of one dump reduced to one (`PerUserSampleReduction`), or one connectivity
/// check's RTT. What the link-quality estimator reads; no I/O behind it.
public struct QualitySample: Equatable, Hashable, Sendable {
    /// The uplink the measured traffic left by.
    public var interfaceIndex: Int
    /// `.passive` (a socket of an app) or `.probe` (reachd's own check).
    public var source: LinkQuality.Source
    /// The socket's smoothed RTT (`tcpi_rtt`), or the check's RTT, milliseconds.
    public var rttMs: Double
    /// The socket's lowest RTT (`tcpi_min_rtt`), milliseconds; nil for a check.
    public var minRttMs: Double?
    /// Segments sent since the last dump (`tcpi_segs_out` difference); nil for a check.
    public var segmentsSent: UInt64?
    /// Segments retransmitted since the last dump (`tcpi_total_retrans` difference).
    public var segmentsRetransmitted: UInt64?
    /// Bytes received since the last dump (`tcpi_bytes_received` difference).
    public var bytesReceived: UInt64?

    public init(interfaceIndex: Int, source: LinkQuality.Source, rttMs: Double, minRttMs: Double? = nil,
                segmentsSent: UInt64? = nil, segmentsRetransmitted: UInt64? = nil, bytesReceived: UInt64? = nil) {
        self.interfaceIndex = interfaceIndex; self.source = source; self.rttMs = rttMs; self.minRttMs = minRttMs
        self.segmentsSent = segmentsSent; self.segmentsRetransmitted = segmentsRetransmitted
        self.bytesReceived = bytesReceived
    }
}

/// Everything one passive pass measured: for each uplink, the sample of the sockets that moved
/// data over it since the previous pass (one, each user one vote: `PerUserSampleReduction`), and
/// how long that was (for throughput).
public struct QualityDump: Equatable, Sendable {
    /// When the dump was read (seconds since boot, the clock that never steps).
    public var uptime: TimeInterval
    /// Seconds since the previous dump; nil for the first one.
    public var interval: TimeInterval?
    /// The samples of the sockets that moved data, by the index of the uplink they left by. An
    /// uplink that is up but moved nothing has no entry (idle, not bad).
    public var samples: [Int: [QualitySample]]
    /// What the sockets sent, received and retransmitted over each uplink since the previous
    /// dump, for the data-stall detector; an uplink no socket moved on has no entry.
    public var stalls: [Int: StallTally]

    public init(uptime: TimeInterval, interval: TimeInterval?, samples: [Int: [QualitySample]], stalls: [Int: StallTally] = [:]) {
        self.uptime = uptime; self.interval = interval; self.samples = samples; self.stalls = stalls
    }
}
