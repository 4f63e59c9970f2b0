/// The `io.reachd.Reachability` varlink interface description (DESIGN.md §3), served by
/// `GetInterfaceDescription`. `io.reachd.Reachability.varlink` next to this file is the same text,
/// shipped for tools; a test keeps the two identical.
public enum InterfaceDescription {
    public static let reachabilityName = "io.reachd.Reachability"

    public static let reachability = """
# Network reachability of this machine, as reachd sees it: which path traffic takes,
# what kind of network that is, and whether the internet really answers.
interface io.reachd.Reachability

# One network interface as the kernel reports it.
type Interface (
  name: string,
  index: int,
  kind: (loopback, ethernet, wifi, wwan, vpn, bridge, virtual, other),
  up: bool,
  carrier: bool,
  operstate: string,
  addresses: []string,
  metered: bool
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

# The last connectivity check.
type Probe (
  url: string,
  result: (unknown, none, portal, limited, full),
  httpStatus: ?int,
  rttMs: ?float,
  portalUrl: ?string,
  error: ?string,
  checkedAt: string
)

type Status (
  status: (notReachable, unknown, ethernet, wifi, wwan, wwan2G, wwan3G, wwan4G, wwan5G),
  reachable: bool,
  connectivity: (unknown, none, portal, limited, full),
  primary: ?Interface,
  vpn: ?Interface,
  cellular: ?Cellular,
  expensive: bool,
  ipv4: bool,
  ipv6: bool,
  gateways: []string,
  flags: []string,
  interfaces: []Interface,
  probe: ?Probe,
  since: string
)

type Reason (
  code: (initial, linkAdded, linkRemoved, linkUp, linkDown, carrierGained, carrierLost,
         addressAdded, addressRemoved, routeAdded, routeRemoved, modemChanged, probeResult,
         resync, configReloaded),
  interface: ?string,
  detail: ?string
)

type Event (
  sequence: int,
  timestamp: string,
  event: (initial, reachabilityChanged),
  reason: Reason,
  previous: ?Status,
  current: Status
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
# "resync". With statusOnly, only changes of status, connectivity and primary are sent.
method Subscribe(after: ?int, statusOnly: ?bool) -> (event: Event)

method Check(host: string, port: ?int) -> (result: HostCheck)

method Probe() -> (probe: Probe)

error ExpectedMore ()
error SubscriberTooSlow (dropped: int)
error HostNotFound (host: string)
error ProbeDisabled ()
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
        case reachabilityName: return reachability
        case Varlink.serviceInterface: return service
        default: return nil
        }
    }
}
