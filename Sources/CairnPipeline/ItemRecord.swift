/// One item as the store keeps it: what to import, where it stands, and the crash-loop bookkeeping.
///
/// "In flight": `inFlight` is set and committed before a phase's stage work starts, and cleared when
/// that phase's outcome (done, failed, timed out, or cleanly abandoned at a cancellation deadline)
/// is persisted. A record still in flight when a run starts was being worked on when the worker died.
public struct ItemRecord: Hashable, Codable, Sendable {
    public var item: ImportItem
    public var state: ItemState
    public var inFlight: Bool
    /// Runs in a row that died while this item was in flight; reset when one of its phases completes.
    public var crashCount: Int
    /// The transfer found these bytes already in the library; the item is `ready` with nothing new.
    public var isDuplicate: Bool

    public init(item: ImportItem, state: ItemState = .placeholder, inFlight: Bool = false, crashCount: Int = 0,
                isDuplicate: Bool = false) {
        self.item = item
        self.state = state
        self.inFlight = inFlight
        self.crashCount = crashCount
        self.isDuplicate = isDuplicate
    }

    public var id: ItemID { item.id }
}
