// Apps write `import Reachability` and nothing else: the model types they meet in this API
// (NetworkStatus, Connectivity, Status, Cellular, Probe, HostCheck, …) come from ReachabilityCore.
@_exported import ReachabilityCore
