import CairnCatalog
import CairnCore
import CairnPostgresCatalog
import CairnQueue
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

/// What every catalog backend must do with import items and their stages' rows: each test runs on every `CatalogBackend`
/// with the same expectations.
@Suite struct ItemCatalogContractTests {
    static func item(_ number: Int, _ path: String, root: String = "/photos", kind: MediaKind = .photo) -> ImportItem {
        ImportItem(relativePath: path, sourceRoot: root, kind: kind, byteCount: Int64(1000 + number),
                   checksum: Checksum(hex: String(format: "%040x", number))!)
    }

    /// Whole seconds: both backends keep at least that much of a time.
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func failure(_ phase: Lane, operation: String? = nil, _ reason: String, attempts: Int = 1,
                        retryable: Bool) -> ItemState {
        .failed(ItemFailure(phase: phase, reason: FailureReason(operation: operation, reason), attempts: attempts,
                            retryable: retryable))
    }

    @Test(arguments: CatalogBackend.allCases)
    func planningKeepsOneRowPerContentAndResumesAnUnfinishedItemWhereItStood(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let photos = try await catalog.sourceID(forRoot: "/photos")
            #expect(try await catalog.sourceID(forRoot: "/photos") == photos)
            let camera = try await catalog.sourceID(forRoot: "/camera")
            #expect(camera != photos)

            let first = try await catalog.planImportItems(
                [Self.item(1, "a.jpg"), Self.item(2, "b.jpg"), Self.item(3, "c.mov", kind: .video)], sourceID: photos)
            #expect(first.map(\.item.relativePath) == ["a.jpg", "b.jpg", "c.mov"])
            #expect(first.map(\.item.kind) == [.photo, .photo, .video])
            #expect(first.allSatisfy { $0.state == .placeholder && $0.item.sourceRoot == "/photos" && $0.item.originalPath == nil })
            #expect(Set(first.map(\.id)).count == 3 && !first.map(\.id).contains(.unassigned))

            var moving = first[0]
            moving.state = .transferring
            moving.inFlight = true
            var done = first[1]
            done.state = .ready
            try await catalog.saveImportItemStates([moving, done], with: StageRows())

            // Seen again from another source: the same rows, moved; the finished one starts again, the unfinished
            // one keeps its state.
            let again = try await catalog.planImportItems(
                [Self.item(2, "moved/b.jpg", root: "/camera"), Self.item(1, "a.jpg", root: "/camera")], sourceID: camera)
            #expect(again.map(\.id) == [first[1].id, first[0].id])
            #expect(again[0].state == .placeholder && again[0].item.relativePath == "moved/b.jpg")
            #expect(again[1].state == .transferring && again[1].inFlight)
            let stored = try await catalog.importItems()
            #expect(stored.map(\.id) == first.map(\.id).sorted())
            #expect(stored.map(\.item.sourceRoot) == stored.map { $0.id == first[2].id ? "/photos" : "/camera" })
            #expect(stored.first { $0.id == first[1].id }?.item.relativePath == "moved/b.jpg")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func anItemTheCrashLoopGuardFailedStaysFailedUntilItIsRetried(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let planned = try await catalog.planImportItems([Self.item(1, "crash.heic"), Self.item(2, "bad.jpg")], sourceID: source)
            var crashed = planned[0]
            crashed.state = Self.failure(.thumbnail, operation: "decode", "the decoder crashed", retryable: false)
            crashed.crashCount = 2
            var damaged = planned[1]
            damaged.state = Self.failure(.thumbnail, operation: "decode", "not a JPEG", retryable: false)
            try await catalog.saveImportItemStates([crashed, damaged], with: StageRows())

            let replanned = try await catalog.planImportItems([Self.item(1, "crash.heic"), Self.item(2, "bad.jpg")], sourceID: source)
            #expect(replanned[0].state == crashed.state && replanned[0].crashCount == 2)
            #expect(replanned[1].state == .placeholder, "failed for good, but not by the guard: found again, tried again")

            #expect(try await catalog.retryCrashFailedImportItems(sourceID: source) == 1)
            let retried = try #require(try await catalog.importItems().first { $0.id == crashed.id })
            #expect(retried.state == Self.failure(.thumbnail, operation: "decode", "the decoder crashed", attempts: 0,
                                                  retryable: true))
            #expect(retried.crashCount == 0 && retried.killCount == 0)
            #expect(try await catalog.planImportItems([Self.item(1, "crash.heic")], sourceID: source)[0].state == retried.state)
            #expect(try await catalog.retryCrashFailedImportItems(sourceID: source) == 0)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aSaveKeepsEachItemsLastStateWithTheRowsItsStagesMade(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let planned = try await catalog.planImportItems([Self.item(1, "a.jpg"), Self.item(2, "b.mov", kind: .video)],
                                                            sourceID: source)
            let photo = planned[0].item.checksum
            var transferring = planned[0], probing = planned[0], thumbnailing = planned[0], failed = planned[1]
            transferring.state = .transferring
            probing.state = .probing
            probing.inFlight = true
            probing.runsAlone = true
            thumbnailing.state = .thumbnailing
            thumbnailing.killCount = 1
            failed.state = Self.failure(.transfer, "EIO reading the source", attempts: 2, retryable: true)
            failed.isDuplicate = true

            let asset = AssetRecord(checksum: photo, kind: .photo, size: 1001, originalExtension: "jpg",
                                    firstSourcePath: "a.jpg", originalPath: "originals/00/a.jpg", importedAt: Self.moment,
                                    runID: "run-1")
            let probe = MediaProbeRecord(checksum: photo, container: "jpeg", width: 4000, height: 3000, durationSeconds: nil,
                                         captureDate: Self.moment.addingTimeInterval(-86_400), cameraMake: "Fujifilm",
                                         cameraModel: nil, latitude: 46.5, longitude: 6.6, altitude: nil, codec: nil,
                                         probeJSON: #"{"container":"jpeg"}"#, probedAt: Self.moment)
            let thumbnail = DerivedFileRecord(checksum: photo, role: .thumbnail, path: "thumbnails/00/a.webp", format: "webp",
                                              width: 320, height: 240, byteCount: 9000, createdAt: Self.moment)
            try await catalog.saveImportItemStates(
                [transferring, probing, failed, thumbnailing],
                with: StageRows(assets: [asset], probes: [probe], derivedFiles: [thumbnail],
                                keptWithoutPreview: [(photo, "first reason"), (photo, "no decoder for this RAW")]))

            var expectedPhoto = thumbnailing
            expectedPhoto.item.originalPath = "originals/00/a.jpg"
            #expect(try await catalog.importItems() == [expectedPhoto, failed])
            var expectedAsset = asset
            expectedAsset.noPreviewReason = "no decoder for this RAW"
            #expect(try await catalog.asset(photo) == expectedAsset)
            #expect(try await catalog.asset(planned[1].item.checksum) == nil)
            #expect(try await catalog.mediaProbe(photo) == probe)
            #expect(try await catalog.derivedFiles(of: photo) == [thumbnail])

            // A second batch: the asset stays as first written, a probe or derived file replaces its predecessor,
            // the last of a batch winning.
            var moved = asset
            moved.originalPath = "elsewhere.jpg"
            var reprobed = probe
            reprobed.container = "jpeg-2"
            reprobed.width = nil
            var clip = thumbnail
            clip.role = .clip
            clip.path = "clips/00/a.mp4"
            clip.durationSeconds = 3.5
            var smaller = thumbnail
            smaller.width = 160
            smaller.byteCount = 4000
            var smallest = smaller
            smallest.width = 80
            try await catalog.saveImportItemStates([], with: StageRows(assets: [moved], probes: [probe, reprobed],
                                                                       derivedFiles: [smaller, clip, smallest]))
            #expect(try await catalog.asset(photo) == expectedAsset)
            #expect(try await catalog.mediaProbe(photo) == reprobed)
            #expect(try await catalog.derivedFiles(of: photo) == [clip, smallest])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func inFlightMarksSetTheFlagsAndNothingElse(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let planned = try await catalog.planImportItems((1...3).map { Self.item($0, "\($0).jpg") }, sourceID: source)
            try await catalog.markImportItemsInFlight([InFlightMark(id: planned[0].id, alone: true), InFlightMark(id: planned[2].id)])
            let marked = try await catalog.importItemsInFlight()
            #expect(marked.map(\.id) == [planned[0].id, planned[2].id])
            #expect(marked.map(\.runsAlone) == [true, false])
            #expect(marked.allSatisfy { $0.state == .placeholder })

            var landed = planned[0]
            landed.state = .queued
            try await catalog.saveImportItemStates([landed], with: StageRows())
            #expect(try await catalog.importItemsInFlight().map(\.id) == [planned[2].id])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func itemsWithTheirOriginalInPlaceOweDerivativesUntilTheyEnd(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let states: [ItemState] = [
                .placeholder, .queued, .transferring, .probing, .thumbnailing, .synthesizing, .ready, .cancelled,
                Self.failure(.transfer, "EIO", retryable: true), Self.failure(.thumbnail, "timed out", retryable: true),
                Self.failure(.thumbnail, "not an image", retryable: false),
            ]
            let planned = try await catalog.planImportItems(states.indices.map { Self.item($0, "\($0).jpg") }, sourceID: source)
            try await catalog.saveImportItemStates(zip(planned, states).map { record, state in
                var record = record
                record.state = state
                return record
            }, with: StageRows())
            // Probing, thumbnailing, synthesizing, and the thumbnail that may be tried again.
            #expect(try await catalog.importItemsOwingDerivatives() == 4)
        }
    }

    @Test func aPostgresCatalogBelongsToOneLibraryAndSaysSoWithoutItsPassword() async throws {
        let location = try CatalogBackend.freshDatabase(password: "s3cret-word")
        try await PostgresCatalog.withCatalog(at: location, library: "/mnt/family") { catalog in
            _ = try await catalog.sourceID(forRoot: "/photos")
        }
        // Opened again, for the same library: the schema is up to date and the rows are there.
        try await PostgresCatalog.withCatalog(at: location, library: "/mnt/family") { catalog in
            let camera = try await catalog.sourceID(forRoot: "/camera")
            #expect(camera == 2)
        }
        let refusal = await #expect(throws: PostgresCatalogError.self) {
            try await PostgresCatalog.withCatalog(at: location, library: "/mnt/studio") { _ in }
        }
        let message = try #require(refusal).description
        #expect(message.contains("/mnt/family") && message.contains("/mnt/studio"))
        #expect(!message.contains("s3cret"))
    }
}
