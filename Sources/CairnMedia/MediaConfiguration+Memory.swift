import CairnCore

extension MediaConfiguration {
    /// The media settings of a run under `budget`. The budget is the one bound on what decodes and encodes hold at
    /// once (the scheduler admits each phase by its estimate); the per-file caps below are not memory bounds but
    /// guards and speed choices, held under the budget so no single file's route needs more than it:
    /// - `maxDecodeBytes` (a HEIF larger than this to decode whole is rendered from its embedded thumbnail, which
    ///   is also the faster route for huge camera files) and `maxStillBytes` (a still file read whole) are at most
    ///   half the budget;
    /// - under a limit, a still's clip is encoded by one x264 thread (`clipEncoderThreads`), which holds the least.
    public static func within(_ budget: MemoryBudget, base: MediaConfiguration = MediaConfiguration()) -> MediaConfiguration {
        var configuration = base
        let room = Int(clamping: min(budget.bytes, budget.hardLimit ?? .max) / 2)
        configuration.maxDecodeBytes = min(base.maxDecodeBytes, room)
        configuration.maxStillBytes = min(base.maxStillBytes, room)
        if budget.isLimit { configuration.clipEncoderThreads = 1 }
        return configuration
    }
}
