/// What a tape build says as it goes: the `tape…` events of its run (`cairn tape build`), in its NDJSON and run log
/// like any run's, so the status page follows a build as it follows an import.
public struct TapeEvent: Sendable, Equatable, Encodable {
    public enum Stage: String, Sendable, Codable, CaseIterable {
        /// The selection is known.
        case started
        /// A segment joined the playlist.
        case segment
        /// A clip is on the playlist in full.
        case clipReady
        /// A clip is left out (or cut short after some of its segments were on the playlist).
        case clipSkipped
        /// The tape can be played.
        case playable
        /// The build is over: what it made, reused and left out.
        case finished
    }

    public var stage: Stage
    /// The tape's name (`started`, `finished`).
    public var tape: String?
    /// The clips in the tape (`started`, `clipReady`, `playable`, `finished`); `toMake`: not on disk yet (`started`).
    public var clips: Int?
    public var toMake: Int?
    /// The playlist's path (`started`, `finished`) and the single movie's, once written (`finished`).
    public var playlist: String?
    public var movie: String?
    /// Why no single movie was written, when it could not be (`finished`; the playlist stands).
    public var movieError: String?
    /// The clip's place in the tape, from 0 (`segment`, `clipReady`, `clipSkipped`).
    public var clip: Int?
    /// The segment's index in its clip and length (`segment`).
    public var segment: Int?
    public var durationSeconds: Double?
    /// How long the tape plays so far (`segment`, `playable`, `finished`).
    public var tapeSeconds: Double?
    /// The clip's asset (`clipReady`, `clipSkipped`), how it was had (`clipReady`: `made` or `reused`) and the
    /// clips on the playlist in full so far (`clipReady`, `playable`).
    public var path: String?
    public var how: String?
    public var clipsReady: Int?
    /// Why a clip is left out, and whether some of it was already on the playlist (`clipSkipped`).
    public var reason: String?
    public var cutShort: Bool?
    /// Clips encoded, reused from earlier builds and left out (`finished`).
    public var encoded: Int?
    public var reused: Int?
    public var skipped: Int?

    public init(stage: Stage, tape: String? = nil, clips: Int? = nil, toMake: Int? = nil, playlist: String? = nil,
                movie: String? = nil, movieError: String? = nil, clip: Int? = nil, segment: Int? = nil, durationSeconds: Double? = nil,
                tapeSeconds: Double? = nil, path: String? = nil, how: String? = nil, clipsReady: Int? = nil,
                reason: String? = nil, cutShort: Bool? = nil, encoded: Int? = nil, reused: Int? = nil, skipped: Int? = nil) {
        self.stage = stage
        self.tape = tape
        self.clips = clips
        self.toMake = toMake
        self.playlist = playlist
        self.movie = movie
        self.movieError = movieError
        self.clip = clip
        self.segment = segment
        self.durationSeconds = durationSeconds
        self.tapeSeconds = tapeSeconds
        self.path = path
        self.how = how
        self.clipsReady = clipsReady
        self.reason = reason
        self.cutShort = cutShort
        self.encoded = encoded
        self.reused = reused
        self.skipped = skipped
    }

    /// Its fields sit beside the record's in one NDJSON object; `stage` is the record's `event`, not a field.
    enum CodingKeys: String, CodingKey {
        case tape, clips, toMake, playlist, movie, movieError, clip, segment, durationSeconds, tapeSeconds, path, how, clipsReady
        case reason, cutShort, encoded, reused, skipped
    }

    init(stage: Stage, from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys) throws -> T? { try fields.decodeIfPresent(T.self, forKey: key) }
        self.init(stage: stage, tape: try value(.tape), clips: try value(.clips), toMake: try value(.toMake),
                  playlist: try value(.playlist), movie: try value(.movie), movieError: try value(.movieError),
                  clip: try value(.clip),
                  segment: try value(.segment), durationSeconds: try value(.durationSeconds),
                  tapeSeconds: try value(.tapeSeconds), path: try value(.path), how: try value(.how),
                  clipsReady: try value(.clipsReady), reason: try value(.reason), cutShort: try value(.cutShort),
                  encoded: try value(.encoded), reused: try value(.reused), skipped: try value(.skipped))
    }
}
