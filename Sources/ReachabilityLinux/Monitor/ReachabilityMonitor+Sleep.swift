import ReachabilityCore

extension ReachabilityMonitor {
    /// The machine is about to sleep: the checker's verdict is dropped, so connectivity is
    /// `unknown` (reason `sleeping`) until a check after wake says otherwise. Returns when the
    /// event, if the status changed, has been handed to every observer (the varlink server
    /// among them): only then may the sleep go on. Stop the checker first, so that no verdict
    /// from before the sleep arrives after this.
    public func prepareForSleep() {
        onQueue {
            probe = nil
            verdictChanged = true
            // What the standby checks said before the sleep says nothing after it.
            if !standbyVerdicts.isEmpty {
                standbyVerdicts = [:]
                rebuild = true
            }
            pendingReason = Reason(code: .sleeping, detail: "the machine is going to sleep")
            evaluate()
        }
    }

    /// The machine woke: links, addresses, routes and rules are read again whole, as after an
    /// overrun (what changed while asleep sent no message anyone read in time), and the
    /// difference is reported with reason `resumed`. Connectivity stays `unknown` until the
    /// checker's fresh verdict. When nothing changed and `awaitingCheck`, that verdict's event
    /// is the one that carries `resumed`.
    public func resumed(awaitingCheck: Bool) {
        onQueue {
            guard socket != nil else { return }
            do {
                try reread()
            } catch {
                log.error("re-reading the kernel's state after wake failed: \(error)")
            }
            probe = nil
            verdictChanged = true
            let sequence = tracker.sequence
            pendingReason = Reason(code: .resumed, detail: "woke from sleep; state re-read from the kernel")
            evaluate()
            if awaitingCheck && tracker.sequence == sequence {
                pendingReason = Reason(code: .resumed, detail: "woke from sleep; connectivity checked afresh")
            }
        }
    }
}
