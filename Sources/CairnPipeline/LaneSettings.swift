import CairnCore

/// How long one phase of one item may take before it counts as a retryable failure.
public enum LaneTimeout: Hashable, Sendable {
    case fixed(Duration)
    /// Grows with the file: max(`minimum`, bytes / `bytesPerSecond`).
    case scaled(minimum: Duration, bytesPerSecond: Int64)

    public func duration(forBytes byteCount: Int64) -> Duration {
        switch self {
        case .fixed(let duration):
            return duration
        case .scaled(let minimum, let bytesPerSecond):
            guard bytesPerSecond > 0, byteCount > 0 else { return minimum }
            let whole = byteCount / bytesPerSecond
            let rest = byteCount % bytesPerSecond
            let scaled = Duration.seconds(whole) + .nanoseconds(Int64(Double(rest) * 1e9 / Double(bytesPerSecond)))
            return max(minimum, scaled)
        }
    }

    /// The same rule with a different floor (for `timeout.transfer=30s`) or a new fixed value.
    func replacingBase(with duration: Duration) -> LaneTimeout {
        switch self {
        case .fixed: return .fixed(duration)
        case .scaled(_, let rate): return .scaled(minimum: duration, bytesPerSecond: rate)
        }
    }
}

/// One lane's knobs.
public struct LaneSettings: Hashable, Sendable {
    /// Items worked on at once.
    public var width: Int
    /// Phases started beyond the width: marked in flight, they wait for one of the `width` runners, so the commit
    /// of their marks (a sync of the library's file system when the batch holds new files) overlaps the work of
    /// the phases running rather than leaving a core idle. They hold no decoder, so memory stays that of `width`.
    public var ahead: Int
    /// Items that may wait for this lane; a producer whose item would overflow it holds its own slot.
    public var inboxCapacity: Int
    public var timeout: LaneTimeout
    /// Runners beyond the width that only small items take (`PipelineConfiguration.smallItemBytes`). A small
    /// picture's phase is short, and the hand-off between one phase and the next left a core idle for about as
    /// long as the work; a small decode takes little memory, so a further runner for small items costs little.
    public var smallItemRunners: Int
    /// Whether the lane's phases do their work in this process, so the memory budget admits them by their estimates;
    /// off for lanes that only wait for a shared queue's workers (`SharedQueueLanes`).
    public var holdsMemory = true
    /// Items of at most this many bytes are held whole in memory while the lane's phase runs (a store's put from
    /// memory): the budget counts them at twice their size, the bytes read and the request's copy of them.
    public var holdsItemsUpTo: Int64 = 0

    /// Phases the lane may have started at once: running, or waiting for a runner.
    public var slots: Int { width + smallItemRunners + ahead }
}

/// Everything the scheduler needs to know besides its collaborators.
public struct PipelineConfiguration: Hashable, Sendable {
    public var transfer: LaneSettings
    public var metadata: LaneSettings
    public var thumbnail: LaneSettings
    public var synthesis: LaneSettings
    /// `--clips on|off`: when off, stills skip synthesis like videos do.
    public var clipsEnabled = true
    /// `--derivatives on|off`: when off (archive only), items stop after the transfer, waiting for their probe,
    /// thumbnail and clip until a run with derivatives on.
    public var derivativesEnabled = true
    /// The destination makes its own derivatives (Immich): items end after the transfer lane, which uploads.
    public var destinationMakesDerivatives = false
    /// Tries per phase for retryable failures (timeouts, I/O), including the first.
    public var maxAttempts = 3
    public var backoff = RetryPolicy(base: .seconds(1), cap: .seconds(60), jitter: 1...1.2)
    /// `--max-errors N`: stop taking new work after N items failed for good; nil for no limit.
    public var maxErrors: Int?
    public var progressWeights = ProgressWeights()
    /// How long the item-state writer lets records gather before a group commit (one sync, one transaction) that
    /// would hold fewer than `commitBatchRecords`. A crash loses at most that much more work, which the next run
    /// redoes. Each sync writes every metadata block the batch's files changed (inode tables, bitmaps and folders,
    /// spread over the 256 folders of each store), and a batch of a few hundred small files changes nearly as many
    /// as one of a thousand: longer, larger batches write far less in all.
    public var commitLinger: Duration = .milliseconds(500)
    /// The most item records one group commit takes (an item of a small-file import makes five to eight); more
    /// wait for the next. Bounds the memory and the transaction of a batch.
    public var commitBatchRecords = 4096
    /// Items of at most this many bytes may take a lane's `smallItemRunners`.
    public var smallItemBytes: Int64 = 1 << 20
    /// Phases of the lanes that decode (metadata, thumbnail, synthesis) running their stage work at once for items
    /// bigger than `smallItemBytes`, all three lanes together (`--lanes decoders=N`); nil: only each lane's own
    /// width bounds them. One a core by default: the blocking pool has more threads than cores (for reads), and
    /// without the bound the three lanes' widths decode big pictures at once on cores that cannot run them faster.
    /// Kept beside the memory budget, which bounds what the phases hold whatever their number: measured without
    /// it, an import held more memory for no steady gain in time (`Benchmarks/README.md`, memory budget).
    public var decoders: Int?
    /// The memory the phases that decode and encode may hold at once, by their estimates (`MemoryFootprint`); nil:
    /// unbounded (tests of other rules).
    public var memory: MemoryBudget?
    /// How long in-flight marks gather before the writer saves them ahead (zero: at once); see `gatherMarks`.
    public var markLinger: Duration = .zero
    /// The fewest phases the lanes that wait for their marks start ahead while marks gather (`gatherMarks`).
    public static let aheadWhileMarksGather = 12

    /// Lets marks gather for `linger` before each save ahead (`ItemCatalog.inFlightMarkLinger`): one save, a round
    /// trip to a server or a hop to the blocking pool, then carries many marks where it carried a few. The phases
    /// waiting for their marks must cover the wait, so a lane that waits for its marks and starts its default
    /// number ahead starts at least `aheadWhileMarksGather` (a number given with `--lanes` stays).
    public mutating func gatherMarks(for linger: Duration) {
        markLinger = linger
        guard linger > .zero else { return }
        for lane in Lane.allCases where lane.waitsForInFlightMark
            && self[lane].ahead == lane.defaultAhead(forWidth: self[lane].width) {
            self[lane].ahead = max(self[lane].ahead, Self.aheadWhileMarksGather)
        }
    }

    /// Defaults that scale with cores: transfer 4 and metadata 4 (I/O bound), thumbnail = cores,
    /// synthesis = cores, and as many decoders as cores over the three decoding lanes (`decoders`). Transfer timeout
    /// max(15 s, bytes / 20 MB/s); metadata 30 s, thumbnail 60 s, synthesis 120 s. Synthesis gets a deep inbox so
    /// thumbnails rarely wait on clips.
    ///
    /// Chosen with `cairn-bench import --no-shell --lanes ...` on 2 cores (58 12 MP stills, 2 clips): clips
    /// are most of an import's work and start only once no thumbnail waits, so a synthesis lane as wide as
    /// the cores ends the import much sooner; a clip lane of cores / 2 left a core idle for the whole tail.
    /// Wider thumbnail (3) or narrower transfer and metadata lanes (2) changed it within the noise.
    ///
    /// The lanes that wait for their in-flight mark start as many phases again ahead of their runners
    /// (`LaneSettings.ahead`): otherwise each thumbnail of a small-file import waits for the commit before it
    /// (and its sync) with its core idle.
    ///
    /// The thumbnail lane has one more runner for files of at most 1 MiB (`smallItemRunners`): on 100,000 small
    /// JPEGs a third thumbnail runner (`--lanes thumbnail=3`) ended the import sooner, and a small file's decode
    /// takes a few megabytes at most, where a big photo's may take hundreds.
    public static func defaults(cores: Int) -> PipelineConfiguration {
        let cores = max(1, cores)
        func lane(_ which: Lane, _ width: Int, _ timeout: LaneTimeout, inbox: Int? = nil,
                  smallItemRunners: Int = 0) -> LaneSettings {
            LaneSettings(width: width, ahead: which.defaultAhead(forWidth: width),
                         inboxCapacity: inbox ?? max(8, 4 * width), timeout: timeout, smallItemRunners: smallItemRunners)
        }
        return PipelineConfiguration(
            transfer: lane(.transfer, 4, .scaled(minimum: .seconds(15), bytesPerSecond: 20_000_000)),
            metadata: lane(.metadata, 4, .fixed(.seconds(30))),
            thumbnail: lane(.thumbnail, cores, .fixed(.seconds(60)), smallItemRunners: 1),
            synthesis: lane(.synthesis, cores, .fixed(.seconds(120)), inbox: 1024),
            decoders: cores)
    }

    public subscript(lane: Lane) -> LaneSettings {
        get {
            switch lane {
            case .transfer: return transfer
            case .metadata: return metadata
            case .thumbnail: return thumbnail
            case .synthesis: return synthesis
            }
        }
        set {
            switch lane {
            case .transfer: transfer = newValue
            case .metadata: metadata = newValue
            case .thumbnail: thumbnail = newValue
            case .synthesis: synthesis = newValue
            }
        }
    }

    /// Whether an item of `kind` takes the synthesis lane under this configuration.
    public func route(for item: ImportItem) -> ItemRoute {
        var route = ItemRoute(kind: item.kind, clipsEnabled: clipsEnabled, derivativesEnabled: derivativesEnabled)
        route.endsAfterTransfer = destinationMakesDerivatives
        return route
    }
}
