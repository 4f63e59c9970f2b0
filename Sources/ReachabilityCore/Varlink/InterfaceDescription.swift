/// The `io.reachd.Reachability` varlink interface description (docs/protocol.md), served by
/// `GetInterfaceDescription`. `io.reachd.Reachability.varlink` next to this file is the same text,
/// shipped for tools; a test keeps the two identical. No two members share a name (the type of
/// the last check is `ConnectivityProbe`, not `Probe` like the method): python's reference
/// `varlink` package keeps one member per name. Type names never go on the wire.
public enum InterfaceDescription {
    public static let reachability = """
# Network reachability of this machine, as reachd sees it: which path traffic takes,
# what kind of network that is, and whether the internet really answers.
interface io.reachd.Reachability

# One network interface as the kernel reports it; dns, searchDomains, nat64Prefix and
# captivePortalApi are what its routers announce (router advertisement RDNSS, DNSSL, PREF64,
# and the RFC 8910 captive-portal API URI). connectivity is the verdict of the standby check
# on an uplink other than the primary (bound to it); null for the primary (its verdict is
# Status.connectivity) and for interfaces not checked. linkQuality is how good the uplink
# is, measured; null before anything is known. stall is set while the apps' traffic over the
# uplink goes unanswered (a data stall), null otherwise.
type Interface (
  name: string,
  index: int,
  kind: (loopback, ethernet, wifi, wwan, vpn, bridge, virtual, other),
  up: bool,
  carrier: bool,
  operstate: string,
  addresses: []string,
  metered: bool,
  dns: []string,
  searchDomains: []string,
  nat64Prefix: ?string,
  captivePortalApi: ?string,
  connectivity: ?(unknown, none, portal, limited, full),
  linkQuality: ?LinkQuality,
  stall: ?DataStall,
  # The Wi-Fi connection as its owner (iwd, NetworkManager, wpa_supplicant) reports it; null
  # for other kinds and while not connected.
  wifi: ?WiFi
)

# The evidence of a data stall, from when it was first suspected: of the segments the apps
# sent over the uplink since it last received one (sentSinceReceive), the share that were
# retransmissions (failRate, 0 to 1), over the dumps periodMs apart that showed it; recent
# is the uplink's last few dumps up to the suspicion, oldest first. method is how it was
# seen: "tcp" (the apps' TCP sockets).
type DataStall (
  since: string,
  method: string,
  failRate: float,
  sentSinceReceive: int,
  periodMs: int,
  recent: []DataStallDump
)

# One sock_diag dump of an uplink: the apps' segments sent (retransmissions included),
# received and retransmitted since the dump periodMs before.
type DataStallDump (
  at: string,
  periodMs: int,
  sent: int,
  received: int,
  retransmitted: int
)

# A Wi-Fi connection. ssid is the name for eyes (control characters and invalid UTF-8
# escaped); bssid, the access point, is location data: null except for root callers. band is
# "2.4GHz", "5GHz" or "6GHz"; strengthPercent NetworkManager's scale, bars (0-4) Android's;
# owner "iwd", "networkManager", "wpaSupplicant" or "nl80211". Only a change of ssid, bssid
# or bars is an event; the other figures are the newest at every read.
type WiFi (
  ssid: ?string,
  bssid: ?string,
  frequencyMHz: ?int,
  band: ?string,
  signalDbm: ?int,
  strengthPercent: ?int,
  bars: ?int,
  txBitrateKbps: ?int,
  owner: string
)

# How good an uplink is, measured from the TCP traffic that crosses it, reachd's own checks
# and the modem's radio. level is Apple's (NWPath.linkQuality); effectiveType the web's
# (navigator.connection): "slow-2g", "2g", "3g", "4g", or null when unknown. Only a change of
# level or effectiveType is an event; the figures are the newest at every read.
type LinkQuality (
  level: (unknown, minimal, moderate, good),
  effectiveType: ?string,
  # The time-weighted median RTT and the lowest seen, milliseconds.
  rttMs: ?float,
  minRttMs: ?float,
  downlinkKbps: ?float,
  # Retransmitted over sent segments, percent.
  lossPercent: ?float,
  samples: int,
  source: (passive, probe, radio, default),
  measuredAt: string,
  # True when nothing was measured for a while: the class is the last one known.
  stale: bool,
  signal: ?RadioSignal
)

# A cellular modem's signal (ModemManager Modem.Signal): dBm and dB figures of the
# technology named, null where it reports none; level is bars, 0 to 4.
type RadioSignal (
  technology: string,
  rssi: ?float,
  rsrp: ?float,
  rsrq: ?float,
  snr: ?float,
  level: int
)

# The cellular radio behind a wwan interface, from ModemManager.
type Cellular (
  generation: ?string,
  accessTechnology: ?string,
  modem: string,
  interface: ?string,
  signalQuality: ?int,
  roaming: ?bool
)

# The last connectivity check; venueInfoUrl, secondsRemaining, bytesRemaining and
# canExtendSession are what a captive-portal API (RFC 8908) said, source is "ra" when one answered.
# (Named apart from the method Probe: a varlink interface is one namespace of members.)
type ConnectivityProbe (
  url: string,
  result: (unknown, none, portal, limited, full),
  httpStatus: ?int,
  rttMs: ?float,
  portalUrl: ?string,
  error: ?string,
  checkedAt: string,
  venueInfoUrl: ?string,
  secondsRemaining: ?int,
  bytesRemaining: ?int,
  canExtendSession: ?bool,
  source: ?string,
  # The step at which the check failed; null when it got an answer.
  failedStage: ?(resolve, connect, tls, request),
  # Each family's own check; null when that family was not checked.
  ipv4Result: ?(unknown, none, portal, limited, full),
  ipv6Result: ?(unknown, none, portal, limited, full),
  # True when the IPv6 check reached an address DNS64 synthesized (64:ff9b::/96).
  nat64: ?bool
)

# How the kernel routes an app's connection to the internet in one address family: the
# public address asked about, the rule and table that decided, and what they found.
type RoutePath (
  family: (ipv4, ipv6),
  destination: string,
  result: (route, unreachable, blackhole, prohibit, none),
  rule: ?int,
  table: ?int,
  interface: ?string,
  gateway: ?string
)

type Status (
  status: (notReachable, unknown, ethernet, wifi, wwan, wwan2G, wwan3G, wwan4G, wwan5G),
  reachable: bool,
  connectivity: (unknown, none, portal, limited, full),
  # Each family's own verdict (none without a path); connectivity is the better of the two.
  ipv4Connectivity: (unknown, none, portal, limited, full),
  ipv6Connectivity: (unknown, none, portal, limited, full),
  primary: ?Interface,
  vpn: ?Interface,
  cellular: ?Cellular,
  expensive: bool,
  # The primary interface is in low data mode ([Interfaces] Constrained=): save data.
  # Null (an older daemon) means false.
  constrained: ?bool,
  ipv4: bool,
  ipv6: bool,
  # The routers of the primary's routes on the path: IPv4 first, each family in address
  # order, at most 8; gatewaysOmitted counts the rest (anyone on a link can announce routers).
  gateways: []string,
  gatewaysOmitted: int,
  flags: []string,
  interfaces: []Interface,
  probe: ?ConnectivityProbe,
  since: string,
  # True while a simulation (Simulate) is in effect.
  simulated: bool,
  # The path per family, IPv4 first: where the policy routing rules and tables send an app.
  routing: []RoutePath,
  # False when the connectivity check is off: connectivity stays unknown, and a reachable
  # path counts as online. Null (an older daemon) means true.
  connectivityCheck: ?bool,
  # How good the primary path is, measured (its uplink's Interface.linkQuality).
  linkQuality: ?LinkQuality
)

type Reason (
  code: (initial, linkAdded, linkRemoved, linkUp, linkDown, carrierGained, carrierLost,
         addressAdded, addressRemoved, routeAdded, routeRemoved, modemChanged, probeResult,
         resync, configReloaded, simulation, ruleAdded, ruleRemoved, killSwitch, routerAdvertisement,
         sleeping, resumed, qualityChanged, costChanged, dataStall, roamed, wifiSignalChanged,
         wifiChanged),
  interface: ?string,
  detail: ?string
)

# One change of Status. "changes" names the Status fields that differ from "previous",
# sorted; "since" never counts, "probe" only when its result or portalUrl changed. Empty for
# "initial"; every other event changes something.
type Event (
  sequence: int,
  timestamp: string,
  event: (initial, reachabilityChanged),
  reason: Reason,
  previous: ?Status,
  current: Status,
  changes: []string
)

type Route (
  address: string,
  interface: ?string,
  kind: ?string,
  gateway: ?string,
  source: ?string,
  type: string
)

type TCPCheck (
  port: int,
  connected: bool,
  rttMs: ?float,
  error: ?string
)

type HostCheck (
  host: string,
  addresses: []string,
  reachable: bool,
  status: string,
  flags: []string,
  routes: []Route,
  tcp: ?TCPCheck
)

method GetStatus() -> (status: Status)

# Requires "more". The first reply is the current status (event "initial"), then one reply
# per change. With `after`, the events after that sequence number that are still in the
# history are replayed first; when they are gone, the first reply is "initial" with reason
# "resync". With changes, only events whose "changes" name one of the given Status fields
# are sent (an unknown name is an InvalidParameter); statusOnly is the shorthand for
# changes: [status, connectivity, primary].
method Subscribe(after: ?int, statusOnly: ?bool, changes: ?[]string) -> (event: Event)

method Check(host: string, port: ?int) -> (result: HostCheck)

method Probe() -> (probe: ConnectivityProbe)

# For root and members of the configured simulation group. Every subscriber sees the given
# status (fields not given come from the real one) with "simulated" true and reason
# "simulation", until `seconds` pass (default 300), `reset` is true, or, with whileConnected,
# the caller hangs up; then one event back to the real status. Replies with the status now
# published.
method Simulate(status: ?string, connectivity: ?string, expensive: ?bool,
                accessTechnology: ?string, seconds: ?int, whileConnected: ?bool,
                reset: ?bool) -> (status: Status)

error ExpectedMore ()
error SubscriberTooSlow (dropped: int)
error HostNotFound (host: string)
error ProbeDisabled ()
error PermissionDenied ()
error Busy (retryAfterMs: int)
"""

    /// The standard `org.varlink.service` interface (varlink.org).
    public static let service = """
# The Varlink Service Interface is provided by every varlink service. It
# describes the service and the interfaces it implements.
interface org.varlink.service

# Get a list of all the interfaces a service provides and information
# about the implementation.
method GetInfo() -> (
  vendor: string,
  product: string,
  version: string,
  url: string,
  interfaces: []string
)

# Get the description of an interface that is implemented by this service.
method GetInterfaceDescription(interface: string) -> (description: string)

# The requested interface was not found.
error InterfaceNotFound (interface: string)

# The requested method was not found
error MethodNotFound (method: string)

# The interface defines the requested method, but the service does not
# implement it.
error MethodNotImplemented (method: string)

# One of the passed parameters is invalid.
error InvalidParameter (parameter: string)

# Client is denied access
error PermissionDenied ()

# Method is expected to be called with 'more' set to true, but wasn't
error ExpectedMore ()
"""

    /// The description of `interface`, nil when this service does not implement it.
    public static func description(of interface: String) -> String? {
        switch interface {
        case Varlink.reachabilityInterface: return reachability
        case Varlink.serviceInterface: return service
        default: return nil
        }
    }
}
