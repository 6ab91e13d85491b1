import CairnCatalog
import CairnCore
import CairnLibrary
import CairnScanner
import Foundation

/// Which shots of one moment make a stack, and which of them is shown: a pure rule over stills taken close
/// together (`AssetStacking` hands them over a cluster at a time).
///
/// In this order, each still in one stack at most: Apple's burst identifier (the same UUID in every frame), a
/// phone's burst naming (Samsung, Huawei, Nexus, Pixel: `BurstName`), a RAW or HEIC beside a JPEG of the same name
/// taken within a second, then three frames or more of one camera in one folder, each within half a second of the
/// one before. The primary is the cover a name marks, else the JPEG of a RAW+JPEG, else the first frame.
public enum StackRules {
    /// How far apart a RAW (or HEIC) and its JPEG may be taken.
    static let maxPairGap = 1.0
    /// How far apart two frames of a burst found by time alone may be, and how many frames it takes.
    static let maxBurstGap = 0.5
    static let minBurstFrames = 3

    static let rawExtensions: Set<String> = [
        "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "raf", "orf", "rw2", "rwl", "pef", "srw",
        "3fr", "iiq", "erf", "kdc", "mrw", "x3f",
    ]
    static let heifExtensions: Set<String> = ["heic", "heif", "hif"]
    static let jpegExtensions: Set<String> = ["jpg", "jpeg", "jpe"]

    public static func stacks(among stills: [StackCandidate], at now: Date) -> [AssetStack] {
        var left = stills.sorted { ($0.captureDate, $0.firstSourcePath) < ($1.captureDate, $1.firstSourcePath) }
        var stacks: [AssetStack] = []
        func take(_ groups: [[StackCandidate]], basis: (([StackCandidate]) -> String), primary: ([StackCandidate]) -> Int) {
            for group in groups where group.count >= 2 {
                var members = group.map(\.checksum)
                let chosen = primary(group)
                members.insert(members.remove(at: chosen), at: 0)
                stacks.append(AssetStack(members: members, basis: basis(group), stackedAt: now))
                let used = Set(members)
                left.removeAll { used.contains($0.checksum) }
            }
        }
        // Apple's burst identifier; the frame Photos showed is not in the files: the first one leads.
        let byIdentifier = Dictionary(grouping: left.filter { !($0.burstIdentifier ?? "").isEmpty }) {
            FileSystem.parentDirectory(of: $0.firstSourcePath) + "\u{0}" + ($0.burstIdentifier ?? "")
        }
        take(byIdentifier.keys.sorted().compactMap { byIdentifier[$0] }, basis: { kindOfPair($0) ?? "burst id" },
             primary: { jpegOfPair($0) ?? 0 })

        // A phone's burst naming: the cover it names, else the lowest frame number.
        var named: [String: [(StackCandidate, BurstName)]] = [:]
        for still in left {
            guard let name = BurstName(FileSystem.baseName(of: still.firstSourcePath)) else { continue }
            let folder = FileSystem.parentDirectory(of: still.firstSourcePath)
            named[folder + "\u{0}" + name.group, default: []].append((still, name))
        }
        take(named.keys.sorted().compactMap { key in
            named[key]?.sorted { ($0.1.index, $0.0.firstSourcePath) < ($1.1.index, $1.0.firstSourcePath) }.map(\.0)
        }, basis: { kindOfPair($0) ?? "burst name" }, primary: { group in
            let names = group.map { BurstName(FileSystem.baseName(of: $0.firstSourcePath)) }
            return names.firstIndex { $0?.isCover == true } ?? jpegOfPair(group) ?? 0
        })

        // A RAW or HEIC and the JPEG of the same name, taken within a second of each other.
        let byStem = Dictionary(grouping: left) { LivePhotoPairing.stem($0.firstSourcePath) }
        let pairs: [[StackCandidate]] = byStem.keys.sorted().compactMap { key in
            guard let group = byStem[key], group.count >= 2, let jpeg = jpegOfPair(group) else { return nil }
            let taken = group[jpeg].captureDate
            guard group.allSatisfy({ abs($0.captureDate.timeIntervalSince(taken)) <= maxPairGap }) else { return nil }
            return group
        }
        take(pairs, basis: { kindOfPair($0) ?? "raw+jpeg" }, primary: { jpegOfPair($0) ?? 0 })

        // Frames of one camera in one folder, each within half a second of the one before.
        let byCamera = Dictionary(grouping: left.filter {
            $0.cameraModel != nil && !rawExtensions.contains(ext($0.firstSourcePath))
        }) { FileSystem.parentDirectory(of: $0.firstSourcePath) + "\u{0}" + ($0.cameraModel ?? "") }
        var chains: [[StackCandidate]] = []
        for key in byCamera.keys.sorted() {
            var chain: [StackCandidate] = []
            for frame in byCamera[key] ?? [] {  // in capture order, as `left` is
                if let last = chain.last, frame.captureDate.timeIntervalSince(last.captureDate) > maxBurstGap {
                    if chain.count >= minBurstFrames { chains.append(chain) }
                    chain = []
                }
                chain.append(frame)
            }
            if chain.count >= minBurstFrames { chains.append(chain) }
        }
        take(chains, basis: { _ in "burst time" }, primary: { _ in 0 })
        return stacks
    }

    /// `raw+jpeg` or `heic+jpeg` when the group is one JPEG and RAWs or HEICs of the same name.
    static func kindOfPair(_ group: [StackCandidate]) -> String? {
        guard jpegOfPair(group) != nil else { return nil }
        return group.contains { rawExtensions.contains(ext($0.firstSourcePath)) } ? "raw+jpeg" : "heic+jpeg"
    }

    /// The JPEG's index when the group is exactly one JPEG beside RAWs or HEICs (of the same name, where the rule
    /// grouped by name; a Pixel's `RAW-01.COVER.jpg` and `RAW-02.ORIGINAL.dng` too).
    static func jpegOfPair(_ group: [StackCandidate]) -> Int? {
        let extensions = group.map { ext($0.firstSourcePath) }
        let jpegs = extensions.indices.filter { jpegExtensions.contains(extensions[$0]) }
        guard jpegs.count == 1,
              extensions.allSatisfy({ jpegExtensions.contains($0) || rawExtensions.contains($0) || heifExtensions.contains($0) })
        else { return nil }
        return jpegs[0]
    }

    static func ext(_ path: String) -> String {
        MediaClassifier.fileExtension(of: FileSystem.baseName(of: path)).lowercased()
    }
}

/// A burst frame's name as phones write it: the burst it belongs to, the frame's number, and whether it is the
/// cover. Samsung `20231207_101605_001.jpg` (or `…_001_COVER.jpg`), Huawei and others `IMG_20231014_183246_BURST001_COVER.jpg`,
/// Nexus `00015IMG_00015_BURST20171111030039_COVER.jpg`, Pixel `PXL_20231207_032111247.RAW-01.COVER.jpg` (and
/// `.RAW-02.ORIGINAL.dng`, `.MP.COVER.jpg`).
public struct BurstName: Equatable, Sendable {
    public var group: String
    public var index: Int
    public var isCover: Bool

    public init(group: String, index: Int, isCover: Bool) {
        self.group = group
        self.index = index
        self.isCover = isCover
    }

    public init?(_ fileName: String) {
        let name = fileName.uppercased()
        if let match = name.wholeMatch(of: Self.samsung) {
            group = "samsung " + match.1
            index = Int(match.2) ?? 0
            isCover = match.3 != nil || index == 1
        } else if let match = name.wholeMatch(of: Self.nexus) {
            group = "nexus " + match.2
            index = Int(match.1) ?? 0
            isCover = match.3 != nil
        } else if let match = name.wholeMatch(of: Self.burstNumbered) {
            group = "burst " + match.1
            index = Int(match.2) ?? 0
            isCover = match.3 != nil
        } else if let match = name.wholeMatch(of: Self.pixel) {
            group = "pixel " + match.1
            index = match.2.flatMap { Int($0) } ?? (match.3 == "COVER" ? 1 : 2)
            isCover = match.3 == "COVER"
        } else {
            return nil
        }
    }

    nonisolated(unsafe) private static let samsung = /(\d{8}_\d{6})_(\d{3})(_COVER)?\.[A-Z0-9]+/
    nonisolated(unsafe) private static let nexus = /(\d{5})IMG_\d{5}_(BURST\d{14,17})(_COVER)?\.[A-Z0-9]+/
    nonisolated(unsafe) private static let burstNumbered = /(.+?)_BURST(\d{3})(_COVER)?\.[A-Z0-9]+/
    nonisolated(unsafe) private static let pixel = /(PXL_\d{8}_\d{9})\.(?:[A-Z_]+-(\d{2})\.)?(?:MP\.)?(COVER|ORIGINAL)\.[A-Z0-9]+/
}
