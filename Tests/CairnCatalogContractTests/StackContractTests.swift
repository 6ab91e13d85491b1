import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with stacks: each test runs on every `CatalogBackend`.
@Suite struct StackContractTests {
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    static func checksum(_ number: Int) -> Checksum { Checksum(hex: String(format: "%040x", number))! }

    /// Photos 1...count taken a second apart from `moment` (the last one undated), and one video; photo 1 carries
    /// an Apple burst identifier and a camera.
    static func stock(_ catalog: any CatalogUnderTest, count: Int) async throws {
        let photos = (1...count).map { number in
            AssetRecord(checksum: checksum(number), kind: .photo, size: 1000, originalExtension: "jpg",
                        firstSourcePath: "DCIM/IMG_\(number).JPG", originalPath: "originals/00/\(number)",
                        importedAt: moment, runID: "import-1")
        }
        let video = AssetRecord(checksum: checksum(100), kind: .video, size: 1000, originalExtension: "mov",
                                firstSourcePath: "DCIM/IMG_100.MOV", originalPath: "originals/00/100",
                                importedAt: moment, runID: "import-1")
        let probes = (photos + [video]).map { asset in
            let number = photos.firstIndex { $0.checksum == asset.checksum }.map { $0 + 1 }
            let burst = number == 1 ? #","burstIdentifier":"B-1","cameraModel":"iPhone""# : ""
            return MediaProbeRecord(checksum: asset.checksum, container: asset.originalExtension, width: 100, height: 100,
                                    durationSeconds: nil,
                                    captureDate: number.flatMap { $0 == count ? nil : moment.addingTimeInterval(Double($0)) }
                                        ?? (asset.kind == .video ? moment : nil),
                                    cameraMake: nil, cameraModel: nil, latitude: nil, longitude: nil, altitude: nil, codec: nil,
                                    probeJSON: #"{"container":"\#(asset.originalExtension)"\#(burst)}"#, probedAt: moment)
        }
        try await catalog.saveImportItemStates([], with: StageRows(assets: photos + [video], probes: probes))
    }

    @Test(arguments: CatalogBackend.allCases)
    func aStackIsKeptWholeOnceAndMadeAtTheDestinationOnce(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            try await Self.stock(catalog, count: 6)
            // Dated stills only (not the undated 6, not the video), by capture date.
            let candidates = try await catalog.stackCandidates(after: nil, limit: 10)
            #expect(candidates.map(\.checksum) == (1...5).map(Self.checksum))
            #expect(candidates.first?.burstIdentifier == "B-1" && candidates.first?.cameraModel == "iPhone")
            #expect(candidates[1].burstIdentifier == nil && candidates[1].firstSourcePath == "DCIM/IMG_2.JPG")
            #expect(candidates[2].captureDate == Self.moment.addingTimeInterval(3))
            #expect(candidates.allSatisfy { $0.stackPrimary == nil })
            let page = try await catalog.stackCandidates(after: candidates[1].position, limit: 2)
            #expect(page.map(\.checksum) == [Self.checksum(3), Self.checksum(4)])

            let stack = AssetStack(members: [Self.checksum(3), Self.checksum(1), Self.checksum(2)], basis: "burst time",
                                   stackedAt: Self.moment)
            // The second names a member of the first: it is left out whole.
            try await catalog.saveStacks([stack, AssetStack(members: [Self.checksum(4), Self.checksum(2)],
                                                            basis: "raw+jpeg", stackedAt: Self.moment)])
            for member in [1, 2, 3] { #expect(try await catalog.stack(of: Self.checksum(member)) == stack) }
            #expect(try await catalog.stack(of: Self.checksum(4)) == nil)
            #expect(try await catalog.allStacks() == [stack])
            #expect(try await catalog.stackCandidates(after: nil, limit: 10).map(\.stackPrimary)
                    == [Self.checksum(3), Self.checksum(3), Self.checksum(3), nil, nil])

            #expect(try await catalog.stacksAwaitingLink() == [stack])
            try await catalog.markStacksLinked([Self.checksum(3)], at: Self.moment)
            #expect(try await catalog.stacksAwaitingLink().isEmpty)
            #expect(try await catalog.allStacks().first?.linkedAt == Self.moment)
            #expect(try await catalog.allStacks().first?.members == [Self.checksum(3), Self.checksum(1), Self.checksum(2)])

            // The destination lost a member: the stack is made again once it is back.
            try await catalog.forgetLostContent([Self.checksum(2)])
            #expect(try await catalog.stacksAwaitingLink().map(\.primary) == [Self.checksum(3)])
            try await catalog.markStacksLinked([Self.checksum(3)], at: Self.moment)

            // A later run's frame grows the stack: the new one takes in every member and replaces it, to be made at
            // the destination again with its own primary first.
            let grown = AssetStack(members: [Self.checksum(4), Self.checksum(1), Self.checksum(2), Self.checksum(3)],
                                   basis: "burst time", stackedAt: Self.moment.addingTimeInterval(60))
            try await catalog.saveStacks([grown])
            #expect(try await catalog.allStacks() == [grown])
            #expect(try await catalog.stack(of: Self.checksum(1)) == grown)
            #expect(try await catalog.stacksAwaitingLink() == [grown])

            // One that would take two of its members and leave the rest is left out: a stack is never split.
            try await catalog.saveStacks([AssetStack(members: [Self.checksum(5), Self.checksum(4), Self.checksum(1)],
                                                     basis: "burst time", stackedAt: Self.moment)])
            #expect(try await catalog.allStacks() == [grown])
            #expect(try await catalog.stack(of: Self.checksum(5)) == nil)
        }
    }

    /// A trashed photo's Takeout JSON, kept by its source path, size and modification time, so later runs hold the
    /// photo back without reading it.
    @Test(arguments: CatalogBackend.allCases)
    func aTrashedPhotosJSONIsKeptByItsPathSizeAndTime(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let path = "t.zip/Takeout/Trip/GONE.jpg.json"
            let json = TrashedTakeoutJSON(sourcePath: path, size: 120, modificationTimeNanoseconds: 7, title: "GONE.jpg",
                                          taken: Self.moment)
            let other = TrashedTakeoutJSON(sourcePath: "a.json", size: 1, modificationTimeNanoseconds: 1, title: nil, taken: nil)
            #expect(try await catalog.trashedTakeoutJSONs(atSourcePaths: [path]).isEmpty)
            try await catalog.saveTrashedTakeoutJSONs([json, other])
            #expect(try await catalog.trashedTakeoutJSONs(atSourcePaths: [path, "b.json"]) == [json])
            let file = SourceFile(relativePath: path, fingerprint: FileFingerprint(device: 1, inode: 2, size: 120,
                                                                                  modificationTimeNanoseconds: 7), kind: .other)
            #expect(json.describes(file))
            var changed = file
            changed.fingerprint.modificationTimeNanoseconds = 8
            #expect(!json.describes(changed))
            // Read again once changed: kept once, as it says now.
            let retitled = TrashedTakeoutJSON(sourcePath: path, size: 130, modificationTimeNanoseconds: 8, title: "GONE(1).jpg",
                                              taken: nil)
            try await catalog.saveTrashedTakeoutJSONs([retitled])
            let both = try await catalog.trashedTakeoutJSONs(atSourcePaths: ["a.json", path])
            #expect(both.sorted { $0.sourcePath < $1.sourcePath } == [other, retitled])
        }
    }
}
