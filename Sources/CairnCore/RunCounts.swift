/// What one run counted: the one count type, in the narration (live, in NDJSON and the run log), in the catalog's
/// run table (`RunRecord.counts`), in an import's summary and in `/metrics`.
public struct RunCounts: Codable, Sendable, Equatable {
    /// Files found in the source (media and not).
    public var filesSeen = 0
    public var bytesSeen: Int64 = 0
    /// New or changed files that need hashing (unchanged ones reuse the cached SHA1).
    public var toHash = 0
    public var bytesToHash: Int64 = 0
    public var hashed = 0
    public var bytesHashed: Int64 = 0
    /// Content the library does not hold yet.
    public var new = 0
    /// Content the library already holds (or seen twice in this source).
    public var duplicates = 0
    /// Items fully imported, counted as they finish.
    public var ready = 0
    /// Files that failed, each with a reason in an `error` event.
    public var failed = 0
    /// Files that are not media or are junk; counted, never imported.
    public var skipped = 0
    /// Checksums stamped "confirmed deleted" in this run.
    public var confirmedDeleted = 0
    /// Media kept byte-identical but with no preview (no decoder here, a RAW with no usable image); also `ready`.
    public var keptWithoutPreview = 0
    /// Retries scheduled after a retryable failure (a timeout, an I/O error, a dropped connection).
    public var retries = 0

    // Known when an import finishes (zero in the narration's live counts).
    /// Content brought in: the ready items and the archived ones.
    public var imported = 0
    /// Files whose content the library held and that the run did not read again.
    public var unchanged = 0
    public var bytesCopied: Int64 = 0
    /// Originals brought in or kept by an archive-only run (`--derivatives off`), waiting for their derivatives.
    public var archived = 0
    /// Content the destination held in its trash and brought back because the source still holds it (Immich);
    /// not counted as duplicates.
    public var restored = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case filesSeen, bytesSeen, toHash, bytesToHash, hashed, bytesHashed, new, duplicates, ready, failed, skipped,
             confirmedDeleted, keptWithoutPreview, retries, imported, unchanged, bytesCopied, archived, restored
    }

    /// The names the catalog's run table used before the two count types were one.
    private static let catalogNames: [CodingKeys: String] = [
        .filesSeen: "files_seen", .hashed: "files_hashed", .bytesHashed: "bytes_hashed", .bytesCopied: "bytes_copied",
        .keptWithoutPreview: "kept_without_preview",
    ]

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The counts the narration keeps are always written; those only an import's end knows, when not zero (so
    /// NDJSON lines stay as documented).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        for (key, value) in [(CodingKeys.filesSeen, filesSeen), (.toHash, toHash), (.hashed, hashed), (.new, new),
                             (.duplicates, duplicates), (.ready, ready), (.failed, failed), (.skipped, skipped),
                             (.confirmedDeleted, confirmedDeleted), (.keptWithoutPreview, keptWithoutPreview),
                             (.retries, retries)] {
            try c.encode(value, forKey: key)
        }
        for (key, value) in [(CodingKeys.bytesSeen, bytesSeen), (.bytesToHash, bytesToHash), (.bytesHashed, bytesHashed)] {
            try c.encode(value, forKey: key)
        }
        for (key, value) in [(CodingKeys.imported, imported), (.unchanged, unchanged), (.archived, archived),
                             (.restored, restored)] where value != 0 {
            try c.encode(value, forKey: key)
        }
        if bytesCopied != 0 { try c.encode(bytesCopied, forKey: .bytesCopied) }
    }

    /// Logs, summaries and run rows written before a counter existed read it as 0.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        func value<V: Decodable & AdditiveArithmetic>(_ key: CodingKeys) throws -> V {
            for name in [key.stringValue, Self.catalogNames[key]].compactMap({ $0 }) {
                if let v = try c.decodeIfPresent(V.self, forKey: AnyKey(stringValue: name)) { return v }
            }
            return .zero
        }
        filesSeen = try value(.filesSeen)
        bytesSeen = try value(.bytesSeen)
        toHash = try value(.toHash)
        bytesToHash = try value(.bytesToHash)
        hashed = try value(.hashed)
        bytesHashed = try value(.bytesHashed)
        new = try value(.new)
        duplicates = try value(.duplicates)
        ready = try value(.ready)
        failed = try value(.failed)
        skipped = try value(.skipped)
        confirmedDeleted = try value(.confirmedDeleted)
        keptWithoutPreview = try value(.keptWithoutPreview)
        retries = try value(.retries)
        imported = try value(.imported)
        unchanged = try value(.unchanged)
        bytesCopied = try value(.bytesCopied)
        archived = try value(.archived)
        restored = try value(.restored)
    }
}
