import CairnCore
import Foundation

/// Run ids that sort by start time and name the run's log file: `20261122T032015Z-7f3a`.
public enum RunID {
    public static func make(at date: Date = Date(), suffix: String? = nil) -> String {
        let stamp = CivilTime(secondOf: date).compactText + "Z"
        let tail = suffix ?? String(UInt16.random(in: .min ... .max), radix: 16)
        return "\(stamp)-\(tail)"
    }
}
