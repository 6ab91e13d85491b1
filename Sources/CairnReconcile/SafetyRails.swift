import CairnCore

/// The named checks that stand between a plan and the library's trash.
public enum SafetyRail: String, Codable, Sendable, CaseIterable {
    // Rails that hold every deletion of the run.
    case sourceMissing
    case sourceNotADirectory
    case sourceEmpty
    case sourceMarkerLost
    case massVanish
    case scanIOErrors
    case firstRun
    // A rail that limits how many deletions run now.
    case maxDeleteCap
    // A warning: nothing is held.
    case massOffload

    /// Whether this rail says the source itself looks wrong (so its absences prove nothing).
    public var doubtsTheSource: Bool {
        switch self {
        case .sourceMissing, .sourceNotADirectory, .sourceEmpty, .sourceMarkerLost, .massVanish, .scanIOErrors:
            return true
        case .firstRun, .maxDeleteCap, .massOffload:
            return false
        }
    }
}

/// One rail that tripped, with the sentence a person reads.
public struct RailTrip: Codable, Sendable, Equatable {
    public var rail: SafetyRail
    public var reason: String

    public init(_ rail: SafetyRail, _ reason: String) {
        self.rail = rail
        self.reason = reason
    }
}

/// The rails' judgement of one run.
public struct SafetyVerdict: Codable, Sendable, Equatable {
    /// Rails that hold every deletion this run, in a fixed order.
    public var holds: [RailTrip]
    /// Rails that let only some deletions run now (the `maxDelete` cap).
    public var limits: [RailTrip]
    /// Warnings that hold nothing (mass offload).
    public var warnings: [RailTrip]

    public init(holds: [RailTrip] = [], limits: [RailTrip] = [], warnings: [RailTrip] = []) {
        self.holds = holds
        self.limits = limits
        self.warnings = warnings
    }

    public var holdsEveryDeletion: Bool { !holds.isEmpty }

    /// Whether the scan is trustworthy evidence of what was deleted: no rail doubts the source.
    public var sourceIsHealthy: Bool { !holds.contains { $0.rail.doubtsTheSource } }

    /// The documented exit code this verdict asks for.
    public var exitStatus: ExitStatus {
        if holds.contains(where: { $0.rail.doubtsTheSource && $0.rail != .scanIOErrors }) {
            return .deletionsHeldBySafetyRail
        }
        if holds.contains(where: { $0.rail == .scanIOErrors }) { return .someFilesFailed }
        return .success
    }
}

/// Judges the source before any deletion is considered. Pure: facts in, verdict out.
public enum SafetyRails {
    /// The rails that can be judged from the scan alone (everything but the cap and the mass-offload warning).
    public static func assessSource(_ inputs: RailInputs, settings: ReconcileSettings) -> [RailTrip] {
        var holds: [RailTrip] = []
        let root = inputs.scan.sourceRoot
        switch inputs.scan.root {
        case .missing:
            holds.append(RailTrip(.sourceMissing,
                "source \(root) is missing (unmounted disk or renamed folder?): every deletion is held"))
        case .notADirectory:
            holds.append(RailTrip(.sourceNotADirectory,
                "source \(root) is not a directory: every deletion is held"))
        case .directory:
            // A brand-new empty source has nothing to lose; on later runs empty means "not the source we knew".
            if inputs.currentFileCount == 0 && !inputs.isFirstRun {
                holds.append(RailTrip(.sourceEmpty,
                    "source \(root) holds no files (the last run saw \(inputs.previousFileCount)): every deletion is held"))
            }
            if inputs.scan.hadMarker && !inputs.scan.hasMarker {
                holds.append(RailTrip(.sourceMarkerLost,
                    "source \(root) lost its \(SourceScanFacts.markerName) marker (a different disk or folder?): every deletion is held"))
            }
            if inputs.previousFileCount > 0 && inputs.currentFileCount > 0 && !inputs.acceptMassVanish {
                let fraction = Double(inputs.vanishedFileCount) / Double(inputs.previousFileCount)
                if fraction > settings.vanishThreshold {
                    holds.append(RailTrip(.massVanish,
                        "\(inputs.vanishedFileCount) of the last run's \(inputs.previousFileCount) files "
                        + "(\(percent(fraction))) vanished from \(root), more than the \(percent(settings.vanishThreshold)) threshold: "
                        + "every deletion is held; if this was intended, run again with --accept-vanished"))
                }
            }
            if inputs.scan.ioErrorCount > 0 {
                let first = inputs.scan.firstIOError.map { " (first: \($0))" } ?? ""
                holds.append(RailTrip(.scanIOErrors,
                    "the scan of \(root) could not read \(inputs.scan.ioErrorCount) path\(inputs.scan.ioErrorCount == 1 ? "" : "s")\(first): "
                    + "nothing is trashed this run"))
            }
        }
        if inputs.isFirstRun {
            holds.append(RailTrip(.firstRun,
                "first run for this source and library: nothing is trashed until cairn has seen the source once"))
        }
        return holds
    }

    /// The mass-offload warning, with the one command that keeps every one of those files in the library.
    public static func massOffloadWarning(confirmedThisRun: Int, runID: String, settings: ReconcileSettings) -> RailTrip? {
        guard confirmedThisRun > settings.massOffloadThreshold else { return nil }
        return RailTrip(.massOffload,
            "\(confirmedThisRun) deletions were confirmed in this run (more than \(settings.massOffloadThreshold)); "
            + "if the files were only moved off the source to free space, keep them all in the library with: "
            + bulkExcludeCommand(runID: runID))
    }

    /// The command that excludes every deletion confirmed in or after `runID` from trashing.
    public static func bulkExcludeCommand(runID: String) -> String {
        "cairn pending exclude --all-confirmed-since \(runID)"
    }

    static func percent(_ fraction: Double) -> String {
        "\(Int((fraction * 100).rounded())) %"
    }
}
