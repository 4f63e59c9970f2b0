import Testing
@testable import ReachabilitySystem
