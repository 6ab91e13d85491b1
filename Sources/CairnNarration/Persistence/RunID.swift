import Foundation

/// Run ids that sort by start time and name the run's log file: `20261122T032015Z-7f3a`.
public enum RunID {
    public static func make(at date: Date = Date(), suffix: String? = nil) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { NarrationFormat.twoDigits(value ?? 0) }
        let stamp = "\(p.year ?? 0)\(two(p.month))\(two(p.day))T\(two(p.hour))\(two(p.minute))\(two(p.second))Z"
        let tail = suffix ?? String(UInt16.random(in: .min ... .max), radix: 16)
        return "\(stamp)-\(tail)"
    }
}
