import CairnCore
import Foundation

/// The record of a tape kept beside its playlist (tapes/NAME/tape.json), for `tape show` and for a build that
/// resumes: which clips, in order, made from what, and what became of each.
///
/// A build starts from a fresh manifest with every clip pending (keeping `created` from an earlier one) and keeps
/// it in step with the core through `apply(_:)`; the shell sets `updated` when it writes the file.
public struct TapeManifest: Sendable, Hashable, Codable {
    public var name: String
    public var formatIdentity: String
    public var created: Date
    public var updated: Date
    public var playable = false
    public var finished = false
    public var clips: [Clip]

    public init(name: String, formatIdentity: String = TapeFormat.standard.identity, created: Date, updated: Date? = nil,
                clips: [Clip]) {
        self.name = name
        self.formatIdentity = formatIdentity
        self.created = created
        self.updated = updated ?? created
        self.clips = clips
    }

    /// What became of a clip.
    public enum ClipState: Sendable, Hashable {
        case pending
        /// On the playlist in full.
        case ready
        /// Left out: nothing of it is on the playlist.
        case skipped(reason: String)
        /// Left out after some of its segments were on the playlist (they stay).
        case cutShort(reason: String)

        public var reason: String? {
            switch self {
            case .pending, .ready: nil
            case .skipped(let reason), .cutShort(let reason): reason
            }
        }
    }

    public struct Clip: Sendable, Hashable, Codable {
        public var contentSHA1: String
        public var kind: TapeClipKind
        public var sourcePath: String
        public var captureTime: Date?
        /// The clip's folder among the clips (`TapeClipKey.folderName`).
        public var folderName: String
        public var state: ClipState = .pending
        /// The published segments' durations, in order.
        public var segmentDurations: [Double] = []
        /// How its segments were made, once it is ready.
        public var origin: TapeClipOrigin?

        public init(contentSHA1: String, kind: TapeClipKind, sourcePath: String, captureTime: Date?, folderName: String) {
            self.contentSHA1 = contentSHA1
            self.kind = kind
            self.sourcePath = sourcePath
            self.captureTime = captureTime
            self.folderName = folderName
        }

        public var durationSeconds: Double { segmentDurations.reduce(0, +) }

        enum CodingKeys: String, CodingKey {
            case contentSHA1, kind, sourcePath, captureTime, folderName, state, reason, segmentDurations, origin
        }

        /// Plain for readers other than cairn: `"state": "skipped", "reason": "..."` rather than a nested object.
        enum StateName: String, Codable {
            case pending, ready, skipped, cutShort
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            contentSHA1 = try container.decode(String.self, forKey: .contentSHA1)
            kind = try container.decode(TapeClipKind.self, forKey: .kind)
            sourcePath = try container.decode(String.self, forKey: .sourcePath)
            captureTime = try container.decodeIfPresent(Date.self, forKey: .captureTime)
            folderName = try container.decode(String.self, forKey: .folderName)
            segmentDurations = try container.decodeIfPresent([Double].self, forKey: .segmentDurations) ?? []
            origin = try container.decodeIfPresent(TapeClipOrigin.self, forKey: .origin)
            let reason = try container.decodeIfPresent(String.self, forKey: .reason) ?? ""
            state = switch try container.decode(StateName.self, forKey: .state) {
            case .pending: .pending
            case .ready: .ready
            case .skipped: .skipped(reason: reason)
            case .cutShort: .cutShort(reason: reason)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(contentSHA1, forKey: .contentSHA1)
            try container.encode(kind, forKey: .kind)
            try container.encode(sourcePath, forKey: .sourcePath)
            try container.encodeIfPresent(captureTime, forKey: .captureTime)
            try container.encode(folderName, forKey: .folderName)
            try container.encode(segmentDurations, forKey: .segmentDurations)
            try container.encodeIfPresent(origin, forKey: .origin)
            let name: StateName = switch state {
            case .pending: .pending
            case .ready: .ready
            case .skipped: .skipped
            case .cutShort: .cutShort
            }
            try container.encode(name, forKey: .state)
            try container.encodeIfPresent(state.reason, forKey: .reason)
        }
    }

    // MARK: Following a build

    /// Keeps the record in step with the core's events (`clip` indexes `clips`).
    public mutating func apply(_ event: TapeBuildEvent) {
        switch event {
        case .segmentPublished(let clip, let index, let duration, _):
            // A resumed build publishes a clip again from segment 0: what was recorded from there on is replaced.
            if index < clips[clip].segmentDurations.count { clips[clip].segmentDurations.removeSubrange(index...) }
            clips[clip].segmentDurations.append(duration)
        case .clipPublished(let clip, let how):
            clips[clip].state = .ready
            clips[clip].origin = how
        case .clipSkipped(let clip, let reason, let cutShort):
            clips[clip].state = cutShort ? .cutShort(reason: reason) : .skipped(reason: reason)
            clips[clip].origin = nil
            if !cutShort { clips[clip].segmentDurations = [] }
        case .playable:
            playable = true
        case .finished:
            finished = true
        }
    }

    /// The length of what the playlist holds: ready clips and the published part of cut-short ones.
    public var durationSeconds: Double { clips.reduce(0) { $0 + $1.durationSeconds } }

    // MARK: JSON

    /// Sorted keys and ISO 8601 dates (whole seconds), so the file diffs well and reads anywhere.
    public func jsonData() throws -> Data {
        try Timestamp.jsonEncoder(pretty: true).encode(self)
    }

    public init(jsonData: Data) throws {
        self = try Timestamp.jsonDecoder().decode(Self.self, from: jsonData)
    }
}
