/// What the scanner learned about the source root itself this run: the evidence the safety rails judge.
public struct SourceScanFacts: Codable, Sendable, Equatable {
    public enum RootState: String, Codable, Sendable {
        case directory
        case missing
        case notADirectory
    }

    /// The source root as the user gave it, for messages.
    public var sourceRoot: String
    public var root: RootState
    /// Whether `<source>/.cairn-source` exists now.
    public var hasMarker: Bool
    /// Whether it existed at the last healthy run (a marker that disappears means a different disk or folder).
    public var hadMarker: Bool
    /// Files or folders the scan could not read this run.
    public var ioErrorCount: Int
    /// The first of them as "path: reason", for the message.
    public var firstIOError: String?

    public init(
        sourceRoot: String, root: RootState = .directory, hasMarker: Bool = false, hadMarker: Bool = false,
        ioErrorCount: Int = 0, firstIOError: String? = nil
    ) {
        self.sourceRoot = sourceRoot
        self.root = root
        self.hasMarker = hasMarker
        self.hadMarker = hadMarker
        self.ioErrorCount = ioErrorCount
        self.firstIOError = firstIOError
    }

    public static let markerName = ".cairn-source"
}

/// Everything the safety rails need besides the candidates themselves.
public struct RailInputs: Codable, Sendable, Equatable {
    public var isFirstRun: Bool
    public var scan: SourceScanFacts
    /// Files in the last healthy snapshot.
    public var previousFileCount: Int
    /// Files found now.
    public var currentFileCount: Int
    /// Files of the last healthy snapshot not found now.
    public var vanishedFileCount: Int
    /// The user said the mass vanish is intended (`--accept-vanished`): the vanish rail stands down.
    public var acceptMassVanish: Bool
    /// Deletions newly confirmed in this run (feeds the mass-offload warning).
    public var confirmedThisRun: Int

    public init(
        isFirstRun: Bool, scan: SourceScanFacts, previousFileCount: Int, currentFileCount: Int,
        vanishedFileCount: Int, acceptMassVanish: Bool = false, confirmedThisRun: Int = 0
    ) {
        self.isFirstRun = isFirstRun
        self.scan = scan
        self.previousFileCount = previousFileCount
        self.currentFileCount = currentFileCount
        self.vanishedFileCount = vanishedFileCount
        self.acceptMassVanish = acceptMassVanish
        self.confirmedThisRun = confirmedThisRun
    }

    /// Counts derived from the last healthy snapshot and the current scan (source-relative path → checksum).
    public init(
        isFirstRun: Bool, scan: SourceScanFacts, previous: [String: some Any], current: [String: some Any],
        acceptMassVanish: Bool = false, confirmedThisRun: Int = 0
    ) {
        let vanished = previous.keys.reduce(0) { $0 + (current[$1] == nil ? 1 : 0) }
        self.init(isFirstRun: isFirstRun, scan: scan, previousFileCount: previous.count,
                  currentFileCount: current.count, vanishedFileCount: vanished,
                  acceptMassVanish: acceptMassVanish, confirmedThisRun: confirmedThisRun)
    }
}
