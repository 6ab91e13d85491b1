import ArgumentParser
import CairnImport

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn-bench",
        abstract: "Measure cairn against its peers on the same files, in the same run.",
        subcommands: BenchRegistry.all
    )
}

@main
enum BenchMain {
    static func main() async {
        // The process setup the cairn executable does first, so in-process runs measure what cairn does.
        MemoryTuning.limitMallocArenas()
        await Bench.main()
    }
}

/// Every benchmark subcommand.
enum BenchRegistry {
    static let all: [any ParsableCommand.Type] = [
        CorpusCommand.self,
        HashBenchmark.self,
        RescanBenchmark.self,
        MediaThumbnailBench.self,
        MediaProbeBench.self,
        MediaSynthesisBench.self,
        ImportBenchmark.self,
        ScaleBenchmark.self,
        CopyBenchmark.self,
        MetricsBenchmark.self,
        QueueBenchmark.self,
    ]
}
