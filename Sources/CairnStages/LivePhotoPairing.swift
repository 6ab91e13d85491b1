import CairnCatalog
import CairnCore
import CairnScanner
import Foundation

/// Finds Live Photos: a still and the short movie taken with it become one pair, kept together in listings,
/// trash and restore.
public enum LivePhotoPairing {
    /// The longest movie a name-and-time pairing accepts (a Live Photo's is about 3 s).
    static let maxMotionSeconds = 4.0
    /// How far apart the still's and the movie's capture times may be for a name-and-time pairing.
    static let maxCaptureGap = 2.0

    /// Pairs what can be paired among the assets in no pair yet, saves the pairs and returns them.
    ///
    /// Apple's content identifier decides when both files carry it (one still, one movie with the same UUID).
    /// Name alone never pairs: without identifiers, a `.MOV` of at most 4 s in the same folder, with the same
    /// base name as a still and a capture time within 2 s of it, is its motion part.
    @discardableResult
    public static func pair(catalog: any AssetLinkCatalog, now: Date) async throws -> [AssetPairRecord] {
        let candidates = try await candidates(catalog)
        var pairs: [AssetPairRecord] = []
        var used = Set<Checksum>()

        var byIdentifier: [String: [PairingCandidate]] = [:]
        for candidate in candidates {
            if let identifier = candidate.contentIdentifier, !identifier.isEmpty {
                byIdentifier[identifier, default: []].append(candidate)
            }
        }
        for group in byIdentifier.values {
            let stills = group.filter { $0.kind == .photo }, movies = group.filter { $0.kind == .video }
            guard stills.count == 1, movies.count == 1 else { continue }
            pairs.append(AssetPairRecord(still: stills[0].checksum, motion: movies[0].checksum,
                                         basis: "content identifier", pairedAt: now))
            used.formUnion([stills[0].checksum, movies[0].checksum])
        }

        var stillsByStem: [String: [PairingCandidate]] = [:]
        for still in candidates where still.kind == .photo && still.contentIdentifier == nil && !used.contains(still.checksum) {
            stillsByStem[stem(still.firstSourcePath), default: []].append(still)
        }
        for movie in candidates where movie.kind == .video && movie.contentIdentifier == nil && !used.contains(movie.checksum) {
            guard isMotionCandidate(movie), let taken = movie.captureDate else { continue }
            let matches = (stillsByStem[stem(movie.firstSourcePath)] ?? []).filter { still in
                !used.contains(still.checksum) && still.captureDate.map { abs($0.timeIntervalSince(taken)) <= maxCaptureGap } == true
            }
            guard matches.count == 1 else { continue }
            pairs.append(AssetPairRecord(still: matches[0].checksum, motion: movie.checksum, basis: "name and time", pairedAt: now))
            used.formUnion([matches[0].checksum, movie.checksum])
        }
        try await catalog.savePairs(pairs)
        return pairs
    }

    /// The unpaired assets that could pair, read in two passes so that a library's ordinary stills (nearly all of
    /// them) are never held: every asset with a content identifier, every movie short enough to be a motion part,
    /// and the stills that share a movie's folder and base name.
    static func candidates(_ catalog: any AssetLinkCatalog) async throws -> [PairingCandidate] {
        var kept: [PairingCandidate] = []
        var movieStems = Set<String>()
        try await forEachUnpairedAsset(catalog) { candidate in
            if let identifier = candidate.contentIdentifier, !identifier.isEmpty {
                kept.append(candidate)
            } else if candidate.kind == .video, isMotionCandidate(candidate) {
                kept.append(candidate)
                movieStems.insert(stem(candidate.firstSourcePath))
            }
        }
        guard !movieStems.isEmpty else { return kept }
        try await forEachUnpairedAsset(catalog) { candidate in
            if candidate.kind == .photo, candidate.contentIdentifier == nil,
               movieStems.contains(stem(candidate.firstSourcePath)) {
                kept.append(candidate)
            }
        }
        return kept
    }

    /// Every unpaired asset, a page at a time.
    private static func forEachUnpairedAsset(_ catalog: any AssetLinkCatalog, _ body: (PairingCandidate) -> Void)
        async throws {
        var last: Checksum?
        while case let page = try await catalog.unpairedAssets(after: last, limit: 4096), let end = page.last {
            page.forEach(body)
            last = end.checksum
        }
    }

    /// A `.MOV` of at most 4 s with a capture time: what a name-and-time pairing accepts as a motion part.
    static func isMotionCandidate(_ movie: PairingCandidate) -> Bool {
        MediaClassifier.fileExtension(of: movie.firstSourcePath).lowercased() == "mov"
            && (movie.durationSeconds.map { $0 <= maxMotionSeconds } ?? false) && movie.captureDate != nil
    }

    /// "DCIM/100APPLE/IMG_0001" for "DCIM/100APPLE/IMG_0001.MOV": folder and base name, case folded.
    static func stem(_ path: String) -> String {
        let lowered = path.lowercased()
        guard let dot = lowered.lastIndex(of: "."), !lowered[dot...].contains("/") else { return lowered }
        return String(lowered[..<dot])
    }
}
