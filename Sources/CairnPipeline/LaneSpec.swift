import CairnCore

/// A `--lanes` value that could not be used; the message names the offending entry.
public struct LaneSpecError: Error, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

extension PipelineConfiguration {
    /// Applies a `--lanes` spec such as `transfer=4,thumbnail=2,synthesis=1`.
    ///
    /// Entries, comma-separated, each at most once:
    /// - `<lane>=N`: width (1...256) of `transfer`, `metadata`, `thumbnail` or `synthesis`;
    /// - `timeout.<lane>=D`: timeout, D like `500ms`, `30s`, `2m`, `1h` (bare numbers are seconds);
    ///   for transfer it sets the floor, the size-scaled rule stays;
    /// - `inbox.<lane>=N`: inbox capacity (1...1,000,000);
    /// - `ahead.<lane>=N`: phases started ahead of the lane's runners (0...256; see `LaneSettings.ahead`). A new
    ///   width brings as many ahead with it in the lanes that wait for their in-flight mark, unless this is given;
    /// - `decoders=N`: phases of the decoding lanes running at once for files over `smallItemBytes`, the three
    ///   lanes together (1...256; see `decoders`).
    public func applying(laneSpec spec: String) throws(LaneSpecError) -> PipelineConfiguration {
        var result = self
        var seen = Set<String>()
        let entries = spec.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingSpaces() }
        guard entries.contains(where: { !$0.isEmpty }) else {
            throw LaneSpecError(message: "empty --lanes value (expected e.g. transfer=4,thumbnail=2)")
        }
        for entry in entries {
            guard !entry.isEmpty else {
                throw LaneSpecError(message: "empty entry in --lanes '\(spec)'")
            }
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw LaneSpecError(message: "'\(entry)' in --lanes is not key=value (expected e.g. thumbnail=2)")
            }
            let key = parts[0].trimmingSpaces().lowercased()
            let value = parts[1].trimmingSpaces()
            guard seen.insert(key).inserted else {
                throw LaneSpecError(message: "'\(key)' appears twice in --lanes '\(spec)'")
            }
            let keyParts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            switch keyParts.count {
            case 1 where key == "decoders":
                result.decoders = try Self.count(value, in: entry, range: 1...256, what: "decoders")
            case 1:
                let lane = try Self.lane(named: keyParts[0], in: entry)
                result[lane].width = try Self.count(value, in: entry, range: 1...256, what: "width")
                if !seen.contains("ahead.\(lane.rawValue)") {
                    result[lane].ahead = lane.defaultAhead(forWidth: result[lane].width)
                }
            case 2 where keyParts[0] == "ahead":
                let lane = try Self.lane(named: keyParts[1], in: entry)
                result[lane].ahead = try Self.count(value, in: entry, range: 0...256, what: "ahead")
            case 2 where keyParts[0] == "timeout":
                let lane = try Self.lane(named: keyParts[1], in: entry)
                let duration = try Self.duration(value, in: entry)
                result[lane].timeout = result[lane].timeout.replacingBase(with: duration)
            case 2 where keyParts[0] == "inbox":
                let lane = try Self.lane(named: keyParts[1], in: entry)
                result[lane].inboxCapacity = try Self.count(value, in: entry, range: 1...1_000_000,
                                                            what: "inbox capacity")
            default:
                throw LaneSpecError(message: "unknown key '\(key)' in --lanes (expected <lane>, timeout.<lane>, "
                                    + "inbox.<lane>, ahead.<lane> or decoders; lanes: transfer, metadata, thumbnail, "
                                    + "synthesis)")
            }
        }
        return result
    }

    private static func lane(named name: String, in entry: String) throws(LaneSpecError) -> Lane {
        // `upload` is the transfer lane of an Immich destination, named as its users think of it.
        guard let lane = name == "upload" ? .transfer : Lane(rawValue: name) else {
            throw LaneSpecError(message: "unknown lane '\(name)' in '\(entry)' "
                                + "(expected transfer (upload for Immich), metadata, thumbnail or synthesis)")
        }
        return lane
    }

    private static func count(_ text: String, in entry: String, range: ClosedRange<Int>,
                              what: String) throws(LaneSpecError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw LaneSpecError(message: "\(what) in '\(entry)' must be a whole number from "
                                + "\(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    private static func duration(_ text: String, in entry: String) throws(LaneSpecError) -> Duration {
        guard let duration = parseDuration(text), duration > .zero else {
            throw LaneSpecError(message: "timeout in '\(entry)' is not a positive duration (use e.g. 500ms, 30s, 2m, 1h)")
        }
        return duration
    }
}

/// Parses `500ms`, `30s`, `1.5s`, `2m`, `1h`, or a bare number of seconds.
public func parseDuration(_ text: String) -> Duration? {
    let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
    var number = Substring(text)
    var scale = 1.0
    for unit in units where text.hasSuffix(unit.suffix) {
        number = text.dropLast(unit.suffix.count)
        scale = unit.seconds
        break
    }
    guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number),
          value.isFinite else { return nil }
    return .milliseconds(Int64((value * scale * 1000).rounded()))
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
