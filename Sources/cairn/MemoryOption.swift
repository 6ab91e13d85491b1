import ArgumentParser
import CairnCore
import CairnImport
import Foundation

/// `--memory` for the commands that read no library settings (`thumbnail`, `worker`, `tape build`): the option,
/// else `CAIRN_MEMORY`, else what the cgroup and the RAM allow.
struct MemoryOption: ParsableArguments {
    @Option(name: .customLong("memory"), help: ArgumentHelp(
        "What decodes and encodes may hold at once, e.g. 512M or 2G (default: $CAIRN_MEMORY, else the cgroup's limit less a margin, or half the RAM).",
        valueName: "size"))
    var memory: String?

    /// The budget, or a usage error naming where the bad size came from.
    func budget() throws -> MemoryBudget {
        do { return try MemoryBudget.resolved(option: memory, environment: ProcessInfo.processInfo.environment) } catch {
            throw ValidationError((memory != nil ? "--memory: " : "CAIRN_MEMORY: ") + error.reason)
        }
    }

    /// As an import does under a limit: what a decode freed leaves the process before the next one is admitted.
    static func tune(for budget: MemoryBudget) {
        if budget.isLimit { MemoryTuning.returnLargeBlocksToTheSystem() }
    }
}
