import Testing
@testable import ReachabilityCore

/// Changes from router advertisement options alone: the first at once, later ones on the same
/// interface folded into one evaluation a window; any other evaluation takes the held ones along.
@Suite struct RouterAnnouncementMergeTests {
    enum Step: Sendable, CustomStringConvertible {
        case announced(Set<Int>, at: Double)
        case timer(at: Double)
        case evaluated(Set<Int>, at: Double)
        var description: String {
            switch self {
            case .announced(let indexes, let at): return "announced \(indexes.sorted()) at \(at)"
            case .timer(let at): return "timer at \(at)"
            case .evaluated(let indexes, let at): return "evaluated \(indexes.sorted()) at \(at)"
            }
        }
    }

    @Test(arguments: [
        ("the first at once, the next held", [Step.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 10.2)],
         [RouterAnnouncementMerge.Action.evaluate, .hold(until: 11)]),
        ("held ones fold into one", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 10.2),
                                     .announced([2], at: 10.5), .announced([2], at: 10.9), .timer(at: 11)],
         [.evaluate, .hold(until: 11), .hold(until: 11), .hold(until: 11), .evaluate]),
        ("an early timer waits", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 10.2), .timer(at: 10.99)],
         [.evaluate, .hold(until: 11), .hold(until: 11)]),
        ("after a window, at once again", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 11.5)],
         [.evaluate, .evaluate]),
        ("interfaces are apart", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([3], at: 10.1)],
         [.evaluate, .evaluate]),
        ("another change flushes what is held", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 10.3),
                                                 .evaluated([], at: 10.4), .timer(at: 11), .announced([2], at: 11.2)],
         [.evaluate, .hold(until: 11), .none, .hold(until: 11.4)]),
        ("a timer with nothing held", [.timer(at: 5)], [.none]),
        ("a clock that went back", [.announced([2], at: 10), .evaluated([2], at: 10), .announced([2], at: 9)], [.evaluate, .evaluate]),
    ] as [(String, [Step], [RouterAnnouncementMerge.Action])])
    func merge(_ name: String, steps: [Step], expected: [RouterAnnouncementMerge.Action]) {
        var merge = RouterAnnouncementMerge(window: 1)
        var actions: [RouterAnnouncementMerge.Action] = []
        for step in steps {
            switch step {
            case .announced(let indexes, let at): actions.append(merge.announced(indexes, now: at))
            case .timer(let at): actions.append(merge.timerFired(now: at))
            case .evaluated(let indexes, let at): merge.evaluated(indexes, now: at)
            }
        }
        #expect(actions == expected, "\(name): \(steps)")
    }

    /// 2,000 announcements a second for ten seconds on one interface: eleven evaluations at most.
    @Test func aFloodIsAboutOneEvaluationASecond() {
        var merge = RouterAnnouncementMerge(window: 1)
        var evaluations = 0
        var timer: Double?
        for step in 0..<20_000 {
            let now = 100 + Double(step) / 2000
            if let due = timer, due <= now {
                timer = nil
                if merge.timerFired(now: now) == .evaluate { merge.evaluated([], now: now); evaluations += 1 }
            }
            switch merge.announced([2], now: now) {
            case .evaluate: merge.evaluated([2], now: now); evaluations += 1
            case .hold(let until): timer = until
            case .none: break
            }
        }
        #expect(evaluations >= 10 && evaluations <= 11, "\(evaluations)")
    }
}
