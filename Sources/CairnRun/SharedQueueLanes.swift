import CairnCore
import CairnPipeline

/// An import's thumbnail and synthesis lanes when their work is queued: a phase there only waits for a job, so
/// the lanes are as wide as the jobs worth keeping queued for the workers, their timeouts cover the wait behind
/// the jobs queued before, and they take none of the decoders (`PipelineConfiguration.decoders`) nor of the memory
/// budget: the workers' own lanes and budgets bound their decoding. `--lanes` still has the last word.
public enum SharedQueueLanes {
    public static let width = 32

    public static func apply(to configuration: inout PipelineConfiguration) {
        for lane in [Lane.thumbnail, .synthesis] {
            configuration[lane].width = width
            configuration[lane].ahead = 0
            configuration[lane].smallItemRunners = 0
            configuration[lane].inboxCapacity = max(configuration[lane].inboxCapacity, 4 * width)
            configuration[lane].holdsMemory = false
        }
        configuration.thumbnail.timeout = .fixed(.seconds(600))
        configuration.synthesis.timeout = .fixed(.seconds(1800))
        configuration.decoders = nil
    }
}
