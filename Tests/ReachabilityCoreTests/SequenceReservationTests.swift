import Testing
@testable import ReachabilityCore

@Suite struct SequenceReservationTests {
    /// The first number is the larger of the clock and the kept number + 1: a clock stepped an
    /// hour back still starts above the last run; a clock ahead of the file starts at the clock.
    @Test(arguments: [
        (clock: 1_700_000_000_000, kept: nil as Int?, first: 1_700_000_000_000),
        (clock: 1_700_000_000_000, kept: 1_600_000_000_000, first: 1_700_000_000_000),
        (clock: 1_700_000_000_000 - 3_600_000, kept: 1_700_000_001_024, first: 1_700_000_001_025),
        (clock: 5, kept: 5, first: 6),
        (clock: 5, kept: Int.max - 10, first: 5),   // a damaged file cannot make numbers overflow
    ])
    func firstNumber(clock: Int, kept: Int?, first: Int) {
        #expect(SequenceReservation.start(clockMilliseconds: clock, kept: kept).first == first)
    }

    /// Before the first event the reservation is written and waited for; then nothing is
    /// written until half the block is used, then once in the background; an event past the
    /// reservation (the write not done) is written for first.
    @Test func writesAheadInBlocks() {
        var (first, r) = SequenceReservation.start(clockMilliseconds: 1000, kept: nil, block: 100)
        #expect(first == 1000)
        #expect(r.publishing(1000) == .writeNow(1100))
        r.written(1100)
        for n in 1001...1050 { #expect(r.publishing(n) == nil, "\(n)") }
        #expect(r.publishing(1051) == .writeLater(1151))
        #expect(r.publishing(1052) == nil)   // one write on its way at a time
        #expect(r.pending == 1151)
        r.written(1151)
        #expect(r.reserved == 1151 && r.pending == nil)
        #expect(r.publishing(1101) == nil)
        #expect(r.publishing(1102) == .writeLater(1202))
        // The background write has not landed and the numbers ran past the file's.
        #expect(r.publishing(1152) == .writeNow(1252))
        r.written(1252)
        r.written(1202)                      // late: the larger number stays
        #expect(r.reserved == 1252 && r.pending == nil)
    }

    /// Every number published was covered by a write that had finished: a crash at any point
    /// leaves a kept number at or above what subscribers saw, so the next run starts above it.
    @Test func aCrashNeverReusesANumber() {
        var (first, r) = SequenceReservation.start(clockMilliseconds: 0, kept: 41, block: 8)
        #expect(first == 42)
        var file: Int? = nil
        var queued: [Int] = []
        for n in first..<(first + 100) {
            switch r.publishing(n) {
            case .writeNow(let number)?: file = max(file ?? number, number); r.written(number)
            case .writeLater(let number)?: queued.append(number)
            case nil: break
            }
            // Background writes land only every third event.
            if n % 3 == 0, !queued.isEmpty { let number = queued.removeFirst(); file = max(file ?? number, number); r.written(number) }
            #expect((file ?? .min) >= n, "published \(n) with the file at \(file.map(String.init) ?? "nothing")")
            #expect(SequenceReservation.start(clockMilliseconds: 0, kept: file).first > n)
        }
    }

    /// A file that cannot be written costs one try per half block, not one per event.
    @Test func failedWritesBackOff() {
        var r = SequenceReservation(block: 10)
        #expect(r.publishing(1) == .writeNow(11))
        r.writeFailed(11)
        for n in 2...6 { #expect(r.publishing(n) == nil) }
        #expect(r.publishing(7) == .writeLater(17))
        r.writeFailed(17)
        #expect(r.pending == nil && r.reserved == 17)
    }

    @Test(arguments: [("123\n", 123 as Int?), ("123", 123), ("", nil), ("\n", nil), ("-5\n", nil), ("12a", nil),
                      ("1234567890123456789", nil), (" 5", nil)])
    func parse(text: String, number: Int?) {
        #expect(SequenceReservation.parse(text) == number)
    }
}
