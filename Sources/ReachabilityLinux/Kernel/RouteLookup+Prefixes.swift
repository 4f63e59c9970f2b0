import CNetlink
#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore

extension RouteLookup {
    /// The prefix of every address of every interface, by interface index (an RTM_GETADDR dump,
    /// `rtnl_addr_alloc_cache`): what lies on a link itself. A point-to-point address gives its
    /// own address with its prefix length.
    public func interfacePrefixes() throws -> [Int: [InterfacePrefix]] {
        var cache: OpaquePointer?
        let rc = rtnl_addr_alloc_cache(socket, &cache)
        guard rc == 0, let cache else { throw RouteLookupError("rtnl_addr_alloc_cache", libnl: rc) }
        defer { nl_cache_free(cache) }
        var prefixes: [Int: [InterfacePrefix]] = [:]
        var object = nl_cache_get_first(cache)
        while let current = object {
            object = nl_cache_get_next(current)
            guard let local = rtnl_addr_get_local(current), let data = nl_addr_get_binary_addr(local) else { continue }
            let family: AddressFamily
            switch (nl_addr_get_family(local), nl_addr_get_len(local)) {
            case (AF_INET, 4): family = .ipv4
            case (AF_INET6, 16): family = .ipv6
            default: continue
            }
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(nl_addr_get_len(local))))
            let prefix = InterfacePrefix(family: family, address: AddressBits(bytes: bytes), length: Int(rtnl_addr_get_prefixlen(current)))
            prefixes[Int(rtnl_addr_get_ifindex(current)), default: []].append(prefix)
        }
        return prefixes
    }
}
