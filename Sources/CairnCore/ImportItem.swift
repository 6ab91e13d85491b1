/// Identity of an item in the store (the catalog's row id).
public struct ItemID: RawRepresentable, Hashable, Comparable, Codable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { self.rawValue = value }

    /// An item not in the catalog yet.
    public static let unassigned = ItemID(0)

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// One file to import, from the plan to the catalog: what every stage is handed, and what the catalog's
/// `import_item` row holds (with the item's state, in `ItemRecord`).
public struct ImportItem: Hashable, Sendable {
    /// The catalog's row id; `unassigned` until the insert that plans the item returns it.
    public var id: ItemID
    /// Path relative to the source root, as reports and messages show it.
    public var relativePath: String
    /// The folder the item was found in (an unfinished item of an earlier run may come from another source).
    public var sourceRoot: String
    public var kind: MediaKind
    /// Size of the source file; scales the transfer timeout and weighs transfer progress.
    public var byteCount: Int64
    /// The SHA1 of its bytes, from the hashing phase that planned it: the item's identity in the library.
    public var checksum: Checksum
    /// Where its original is in the library (relative to the library root), once an earlier run put it there;
    /// nil before: the transfer then names it from `relativePath`.
    public var originalPath: String?

    public init(id: ItemID = .unassigned, relativePath: String, sourceRoot: String, kind: MediaKind, byteCount: Int64,
                checksum: Checksum, originalPath: String? = nil) {
        self.id = id
        self.relativePath = relativePath
        self.sourceRoot = sourceRoot
        self.kind = kind
        self.byteCount = byteCount
        self.checksum = checksum
        self.originalPath = originalPath
    }

    /// The source file's absolute path.
    public var sourcePath: String { sourceRoot + "/" + relativePath }
}

/// One item as the store keeps it: what to import, where it stands, and the crash-loop bookkeeping.
///
/// "In flight": `inFlight` is set and committed before a phase's stage work starts, and cleared when
/// that phase's outcome (done, failed, timed out, or cleanly abandoned at a cancellation deadline)
/// is persisted. A record still in flight when a run starts may have been worked on when the worker died
/// (`CrashLoopGuard` weighs that).
public struct ItemRecord: Hashable, Sendable {
    public var item: ImportItem
    public var state: ItemState
    public var inFlight: Bool
    /// The mark is of a crash suspect running alone: nothing else was being worked on.
    public var runsAlone: Bool
    /// Runs in a row that crashed (a fault signal recorded) while this item was in flight; reset when one of its
    /// phases returns.
    public var crashCount: Int
    /// Runs in a row that died with no fault recorded (killed) while this item was in flight; reset likewise.
    public var killCount: Int
    /// The transfer found these bytes already in the library; the item is `ready` with nothing new.
    public var isDuplicate: Bool

    public init(item: ImportItem, state: ItemState = .placeholder, inFlight: Bool = false, runsAlone: Bool = false,
                crashCount: Int = 0, killCount: Int = 0, isDuplicate: Bool = false) {
        self.item = item
        self.state = state
        self.inFlight = inFlight
        self.runsAlone = runsAlone
        self.crashCount = crashCount
        self.killCount = killCount
        self.isDuplicate = isDuplicate
    }

    public var id: ItemID { item.id }
}

/// The record's one codec: the columns of an `import_item` row joined with its source's `root_path` and its
/// asset's `original_path` (null before the transfer), the state through `ItemState`'s own columns.
extension ItemRecord: Codable {
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case id, sha1, relativePath = "relative_path", rootPath = "root_path", kind, size
        case originalPath = "original_path", inFlight = "in_flight"
        case runsAlone = "in_flight_alone", crashCount = "crash_count", killCount = "kill_count", duplicate
    }

    public init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        item = ImportItem(
            id: try columns.decode(ItemID.self, forKey: .id),
            relativePath: try columns.decode(String.self, forKey: .relativePath),
            sourceRoot: try columns.decode(String.self, forKey: .rootPath),
            kind: MediaKind(rawValue: try columns.decode(String.self, forKey: .kind)) ?? .other,
            byteCount: try columns.decode(Int64.self, forKey: .size),
            checksum: try columns.decode(Checksum.self, forKey: .sha1),
            originalPath: try columns.decodeIfPresent(String.self, forKey: .originalPath))
        state = try ItemState(from: decoder)
        inFlight = try columns.decode(Bool.self, forKey: .inFlight)
        runsAlone = try columns.decode(Bool.self, forKey: .runsAlone)
        crashCount = try columns.decode(Int.self, forKey: .crashCount)
        killCount = try columns.decode(Int.self, forKey: .killCount)
        isDuplicate = try columns.decode(Bool.self, forKey: .duplicate)
    }

    public func encode(to encoder: any Encoder) throws {
        var columns = encoder.container(keyedBy: CodingKeys.self)
        try columns.encode(item.id, forKey: .id)
        try columns.encode(item.checksum, forKey: .sha1)
        try columns.encode(item.relativePath, forKey: .relativePath)
        try columns.encode(item.sourceRoot, forKey: .rootPath)
        try columns.encode(item.kind.rawValue, forKey: .kind)
        try columns.encode(item.byteCount, forKey: .size)
        try columns.encode(item.originalPath, forKey: .originalPath)
        try state.encode(to: encoder)
        try columns.encode(inFlight, forKey: .inFlight)
        try columns.encode(runsAlone, forKey: .runsAlone)
        try columns.encode(crashCount, forKey: .crashCount)
        try columns.encode(killCount, forKey: .killCount)
        try columns.encode(isDuplicate, forKey: .duplicate)
    }
}

extension ItemRecord {
    /// Each item's last record in `records`, in the order the items first appear. The records are saved in one
    /// transaction, so the states an item passed through within it are never seen: writing them is work for nothing
    /// (an item of a small-file import moves five to eight times, mostly within one group commit).
    public static func latestPerItem(_ records: [ItemRecord]) -> [ItemRecord] {
        records.lastOfEach(by: \.id)
    }
}

extension Array {
    /// The last element of each key, in the order the keys first appear: what a batch that may name a row several
    /// times writes (one statement may not write a row twice, and only the last word counts). Nothing is reserved
    /// for all of `self`: in the batches this serves, keys repeat, and the result is a fraction of the input.
    @inlinable
    public func lastOfEach<Key: Hashable>(by key: (Element) -> Key) -> [Element] {
        var position = [Key: Int]()
        var latest: [Element] = []
        for element in self {
            let key = key(element)
            if let index = position[key] {
                latest[index] = element
            } else {
                position[key] = latest.count
                latest.append(element)
            }
        }
        return latest
    }
}

/// An item's in-flight mark as it is saved ahead of its record: which item, and whether it runs alone (a crash
/// suspect, with nothing else in flight).
public struct InFlightMark: Hashable, Sendable {
    public var id: ItemID
    public var alone: Bool

    public init(id: ItemID, alone: Bool = false) {
        self.id = id
        self.alone = alone
    }
}
