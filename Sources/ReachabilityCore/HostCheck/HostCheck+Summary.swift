/// The human forms of a host check, for `reachctl check`.
extension HostCheck {
    /// One line: `example.com (93.184.216.34): reachable via eth0 gateway 10.0.0.1 src 10.0.0.2
    /// [reachable] · tcp/443 connected in 12.3 ms`. The address shown is the one the answer
    /// describes; `+N more` counts the host's other addresses (all of them are in `--json`).
    public var summary: String {
        var line = host
        if let first = addresses.first, first != host, "[\(first)]" != host {
            line += " (\(first)\(addresses.count > 1 ? ", +\(addresses.count - 1) more" : ""))"
        } else if addresses.count > 1 {
            line += " (+\(addresses.count - 1) more)"
        }
        line += ": "
        line += reachable ? "reachable" : "not reachable"
        if let route = primaryRoute {
            if route.type == "local" { line += " (local address)" }
            if let interface = route.interface {
                line += " via \(interface)"
                if let gateway = route.gateway { line += " gateway \(gateway)" }
                if let source = route.source { line += " src \(source)" }
            } else if route.type != "unicast" && route.type != "local" {
                line += route.type == "unreachable" ? ": no route" : ": \(route.type) route"
            }
        } else {
            line += ": no addresses"
        }
        if !flags.isEmpty { line += " [\(flags.joined(separator: ", "))]" }
        if let tcp {
            if tcp.connected {
                line += " · tcp/\(tcp.port) connected" + (tcp.rttMs.map { " in \(Self.milliseconds($0)) ms" } ?? "")
            } else if tcp.portClosed {
                line += " · tcp/\(tcp.port) closed (connection refused)"
            } else {
                line += " · tcp/\(tcp.port) failed" + (tcp.error.map { ": \($0)" } ?? "")
            }
        }
        return line
    }

    /// The answer with what changes on every check blanked (the TCP round trip), so that
    /// `reachctl check --watch` prints a line only when the answer itself changed.
    public var comparable: HostCheck {
        var copy = self
        copy.tcp?.rttMs = nil
        return copy
    }

    /// `12.3`: one decimal, as `ping` prints round trips.
    static func milliseconds(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        let whole = Int(tenths / 10), fraction = Int(abs(tenths.truncatingRemainder(dividingBy: 10)))
        return "\(whole).\(fraction)"
    }
}
