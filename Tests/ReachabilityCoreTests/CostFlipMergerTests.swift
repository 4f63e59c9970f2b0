import Testing
@testable import ReachabilityCore

@Suite struct CostFlipMergerTests {
    private static let on = "DHCP lease asks for metered use (ANDROID_METERED)"
    private static let off = "DHCP lease no longer asks for metered use"

    /// What a run of flips at the given times shows, with the timers fired when they are due.
    private static func shows(_ flips: [(at: Double, metered: Bool)], until end: Double, merger: inout CostFlipMerger) -> [(Double, Bool)] {
        var shown: [(Double, Bool)] = []
        var timers: [Double] = []
        var current = false
        func perform(_ actions: [CostFlipMerger.Action], now: Double) {
            for action in actions {
                switch action {
                case .show(_, let metered, _): shown.append((now, metered))
                case .arm(_, let seconds): timers.append(now + seconds)
                case .log: break
                }
            }
        }
        for flip in flips {
            while let due = timers.min(), due <= flip.at {
                timers.removeAll { $0 == due }
                perform(merger.intervalEnded(index: 3, now: due), now: due)
            }
            perform(merger.guessChanged(index: 3, metered: flip.metered, shown: current, detail: flip.metered ? on : off, now: flip.at), now: flip.at)
            current = flip.metered
        }
        while let due = timers.min(), due <= end {
            timers.removeAll { $0 == due }
            perform(merger.intervalEnded(index: 3, now: due), now: due)
        }
        return shown
    }

    /// A flip after a quiet second is shown at once; one within the second waits for its end.
    @Test func firstAtOnceThenOncePerSecond() {
        var m = CostFlipMerger()
        #expect(m.guessChanged(index: 3, metered: true, shown: false, detail: Self.on, now: 10)
                == [.log(index: 3, detail: Self.on, suppressed: 0), .show(index: 3, metered: true, detail: Self.on)])
        #expect(m.shown(3) == true)
        #expect(m.guessChanged(index: 3, metered: false, shown: true, detail: Self.off, now: 10.25)
                == [.log(index: 3, detail: Self.off, suppressed: 0), .arm(index: 3, seconds: 0.75)])
        #expect(m.shown(3) == true)   // held: the classifier still sees what subscribers saw
        #expect(m.intervalEnded(index: 3, now: 11) == [.show(index: 3, metered: false, detail: Self.off)])
        #expect(m.shown(3) == false)
        // Quiet for a second: at once again.
        #expect(m.guessChanged(index: 3, metered: true, shown: false, detail: Self.on, now: 12.5).contains(.show(index: 3, metered: true, detail: Self.on)))
    }

    /// Flipped and flipped back within the second: no event at all.
    @Test func aFlipBackIsNoEvent() {
        var m = CostFlipMerger()
        _ = m.guessChanged(index: 3, metered: true, shown: false, detail: Self.on, now: 0)
        _ = m.guessChanged(index: 3, metered: false, shown: true, detail: Self.off, now: 0.1)
        _ = m.guessChanged(index: 3, metered: true, shown: true, detail: Self.on, now: 0.2)
        #expect(m.intervalEnded(index: 3, now: 1) == [])
        #expect(m.shown(3) == true)
        #expect(m.intervalEnded(index: 3, now: 1.5) == [])   // a stray timer does nothing
    }

    /// 100 flips a second for 3 s: at most one show a second (4 here), none within a second of
    /// another, and the last shown is the last value.
    @Test func aFloodIsOneEventASecond() {
        var m = CostFlipMerger()
        let flips = (0..<300).map { (at: Double($0) / 100, metered: $0 % 2 == 0) }
        let shown = Self.shows(flips, until: 10, merger: &m)
        #expect(shown.count <= 4, "\(shown)")
        for (a, b) in zip(shown, shown.dropFirst()) { #expect(b.0 - a.0 >= 1 - 1e-9, "\(shown)") }
        #expect(shown.last?.1 == flips.last?.metered)
        #expect(m.shown(3) == flips.last?.metered)
    }

    /// Links are merged apart: a flood on one does not hold the other back.
    @Test func linksApart() {
        var m = CostFlipMerger()
        _ = m.guessChanged(index: 3, metered: true, shown: false, detail: Self.on, now: 0)
        _ = m.guessChanged(index: 3, metered: false, shown: true, detail: Self.off, now: 0.1)
        #expect(m.guessChanged(index: 4, metered: true, shown: false, detail: Self.on, now: 0.2).contains(.show(index: 4, metered: true, detail: Self.on)))
        m.forget(3)
        #expect(m.shown(3) == nil && m.intervalEnded(index: 3, now: 1) == [])
    }

    /// The first word on a link is logged; its flips then once a "minute" (64 s here, so that
    /// the bucket's sums are exact in binary), the next line counting those not logged.
    @Test func flipsAreLoggedOnceAMinute() {
        var m = CostFlipMerger(logInterval: 64)
        var logged: [(Double, Int)] = []
        var value = true
        for step in 0..<262 {
            let now = Double(step) / 2
            for action in m.guessChanged(index: 3, metered: value, shown: !value, detail: value ? Self.on : Self.off, now: now) {
                if case .log(_, _, let suppressed) = action { logged.append((now, suppressed)) }
            }
            value.toggle()
        }
        // t = 0 (the first word), 0.5 (the first flip), then 64.5 and 128.5.
        #expect(logged.map(\.0) == [0, 0.5, 64.5, 128.5], "\(logged)")
        #expect(logged.map(\.1) == [0, 0, 127, 127])
    }
}
