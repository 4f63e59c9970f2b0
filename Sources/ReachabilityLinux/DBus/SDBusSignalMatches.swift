import CSystemd

/// Match rules installed for one receiver (`sd_bus_add_match_async`), all sharing two
/// capture-free C callbacks whose userdata is this object: each signal goes to `onSignal`, each
/// rule the bus refused to `onRefused`. sd-bus calls them from `sd_bus_process`, on the queue
/// that drives the bus. The matches last as long as this object (its slots are unreferenced when
/// it goes), so the owner keeps it while connected.
final class SDBusSignalMatches {
    private let onSignal: (SDBusMessage) -> Void
    private let onRefused: (SDBusError) -> Void
    private var slots: [SDBusSlot] = []

    init(bus: SDBus, rules: [String], onSignal: @escaping (SDBusMessage) -> Void,
         onRefused: @escaping (SDBusError) -> Void) throws(SDBusError) {
        self.onSignal = onSignal
        self.onRefused = onRefused
        let context = Unmanaged.passUnretained(self).toOpaque()
        for rule in rules {
            slots.append(try bus.addMatchAsync(rule, callback: Self.signalHandler, installed: Self.installedHandler,
                                               userdata: context))
        }
    }

    private static let signalHandler: SDBusHandler = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let matches = Unmanaged<SDBusSignalMatches>.fromOpaque(userdata).takeUnretainedValue()
        matches.onSignal(SDBusMessage(borrowing: message))
        return 0
    }

    private static let installedHandler: SDBusHandler = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let matches = Unmanaged<SDBusSignalMatches>.fromOpaque(userdata).takeUnretainedValue()
        if let error = SDBusMessage(borrowing: message).error { matches.onRefused(error) }
        return 0
    }
}
