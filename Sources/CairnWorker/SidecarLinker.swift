import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnMedia
import CairnScanner
import Foundation

/// Stores a scan's sidecars (`.xmp`, `.aae`, Takeout `.json`) byte-identical beside the originals and links each
/// to the asset it describes, on the run that brings the media or any later one; fills a photo's missing
/// capture time and position from them.
struct SidecarLinker {
    let library: Library
    let now: Date

    struct Outcome {
        var linked = 0
        var failures: [ImportFailure] = []
    }

    /// - Parameter mediaIn: this scan's media directly in a folder ("" for the source root), source-relative path →
    ///   checksum. A sidecar only names media beside it, so only the folders of sidecars still to link are read:
    ///   a rescan whose sidecars are all linked reads none, and no path → checksum line of the whole source is held.
    func link(_ sidecars: [ScannedFile], sourceRoot: String,
              mediaIn: (_ folder: String) throws -> [String: Checksum]) -> Outcome {
        var outcome = Outcome()
        let catalog = library.catalog
        var waiting: [String: [ScannedFile]] = [:]
        for sidecar in sidecars where SidecarMatcher.kind(of: sidecar.relativePath) != nil {
            // Unchanged since it was linked: a rescan reads nothing (one indexed lookup per sidecar).
            let size = sidecar.fingerprint.size, modified = sidecar.fingerprint.modificationTimeNanoseconds
            if (try? catalog.sidecarAlreadyLinked(sourcePath: sidecar.relativePath, size: size,
                                                  modificationTimeNanoseconds: modified)) == true { continue }
            waiting[Self.folder(of: sidecar.relativePath), default: []].append(sidecar)
        }
        for (folder, group) in waiting.sorted(by: { $0.key < $1.key }) {
            let checksums: [String: Checksum]
            do {
                checksums = try mediaIn(folder)
            } catch {
                outcome.failures += group.map {
                    ImportFailure(relativePath: $0.relativePath, phase: .sidecar, reason: FailureReason("\(error)"),
                                  retryable: true)
                }
                continue
            }
            let index = SidecarMatcher.Index(Array(checksums.keys))
            for sidecar in group { link(sidecar, sourceRoot: sourceRoot, index: index, checksums: checksums, into: &outcome) }
        }
        return outcome
    }

    static func folder(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    private func link(_ sidecar: ScannedFile, sourceRoot: String, index: SidecarMatcher.Index,
                      checksums: [String: Checksum], into outcome: inout Outcome) {
        let catalog = library.catalog
        let path = sourceRoot + "/" + sidecar.relativePath
        guard let kind = SidecarMatcher.kind(of: sidecar.relativePath) else { return }
        let size = sidecar.fingerprint.size, modified = sidecar.fingerprint.modificationTimeNanoseconds
        var takeout: TakeoutMetadata?
        if kind == .takeout {
            // A .json that is not Google's photo metadata is not a sidecar.
            guard let parsed = TakeoutMetadata(path: path) else { return }
            takeout = parsed
        }
        guard let mediaPath = SidecarMatcher.media(for: sidecar.relativePath, in: index, title: takeout?.title),
              let asset = checksums[mediaPath], (try? catalog.asset(asset)) != nil else { return }
        do {
            let hasher = try FileHasher()
            let checksum = try hasher.hash(path: path).checksum
            let ext = MediaClassifier.fileExtension(of: sidecar.relativePath).lowercased()
            let stored = "sidecars/\(checksum.hex.prefix(2))/\(checksum.hex.dropFirst(2).prefix(2))/\(checksum.hex).\(ext)"
            _ = try OriginalsStore(layout: library.layout).place(sourcePath: path, checksum: checksum,
                                                               relativePath: stored, hasher: hasher)
            try catalog.linkSidecar(SidecarRecord(checksum: checksum, asset: asset, kind: kind.rawValue, path: stored,
                                                  sourcePath: sidecar.relativePath, sourceSize: size,
                                                  sourceModificationTimeNanoseconds: modified, linkedAt: now))
            try fillMetadata(asset, kind: kind, takeout: takeout, sidecarPath: path)
            outcome.linked += 1
        } catch {
            outcome.failures.append(ImportFailure(relativePath: sidecar.relativePath, phase: .sidecar,
                                                  reason: FailureReason("\(error)"), retryable: true))
        }
    }

    /// A photo with no capture time or position of its own takes the sidecar's, and says so.
    private func fillMetadata(_ asset: Checksum, kind: SidecarMatcher.Kind, takeout: TakeoutMetadata?, sidecarPath: String) throws {
        guard let record = try library.catalog.mediaProbe(asset),
              var probe = LibraryBrowser.decodeProbe(record.probeJSON) else { return }
        var changed = false
        if probe.captureTime == nil || probe.captureDate == nil {
            var time: CaptureTime?
            if let instant = takeout?.photoTaken {
                time = CaptureTime(instant: instant, local: nil, offset: nil, source: "takeout-json")
            } else if kind == .xmp, let text = try? String(contentsOfFile: sidecarPath, encoding: .utf8) {
                time = XMPDates.captureTime(in: text)
            }
            if let time {
                probe.captureTime = time
                probe.captureDate = time.sortDate
                changed = true
            }
        }
        if probe.gps == nil, let position = takeout?.position {
            probe.gps = position
            probe.gpsSource = "takeout-json"
            changed = true
        }
        guard changed else { return }
        let json = String(decoding: try JSONEncoder().encode(probe), as: UTF8.self)
        try library.catalog.fillFromSidecar(asset, captureDate: probe.captureDate, latitude: probe.gps?.latitude,
                                            longitude: probe.gps?.longitude, probeJSON: json)
    }
}

/// What a Google Takeout `.json` says about its photo.
struct TakeoutMetadata {
    var title: String?
    var photoTaken: Date?
    var position: GPSCoordinate?

    /// Nil when the file is not a JSON object with Takeout's fields.
    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path), data.count <= SidecarMatcher.maxBytes,
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        title = object["title"] as? String
        if let taken = object["photoTakenTime"] as? [String: Any],
           let seconds = (taken["timestamp"] as? String).flatMap(Double.init) ?? taken["timestamp"] as? Double {
            photoTaken = Date(timeIntervalSince1970: seconds)
        }
        // Takeout writes 0,0 when it has no position.
        for key in ["geoData", "geoDataExif"] where position == nil {
            if let geo = object[key] as? [String: Any], let latitude = geo["latitude"] as? Double,
               let longitude = geo["longitude"] as? Double, latitude != 0 || longitude != 0 {
                position = GPSCoordinate(latitude: latitude, longitude: longitude, altitude: geo["altitude"] as? Double)
            }
        }
        guard title != nil || photoTaken != nil else { return nil }
    }
}

/// Capture dates in an XMP packet: `exif:DateTimeOriginal`, else `photoshop:DateCreated` or `xmp:CreateDate`,
/// as attributes or elements.
enum XMPDates {
    static func captureTime(in xmp: String) -> CaptureTime? {
        for name in ["exif:DateTimeOriginal", "photoshop:DateCreated", "xmp:CreateDate"] {
            for pattern in [name + #"="([^"]+)""#, "<" + name + #">([^<]+)<"#] {
                guard let match = xmp.range(of: pattern, options: .regularExpression) else { continue }
                let value = xmp[match].dropFirst(name.count + 2).dropLast(pattern.hasPrefix("<") ? 1 : 1)
                if let time = CaptureTime.parse(String(value), source: "xmp") { return time }
            }
        }
        return nil
    }
}
