// swift-tools-version:6.1
import PackageDescription

// Layers: a target imports only targets listed above it; see README "Architecture".
/// The layers, lowest first. A target imports only targets of layers below its own, never one of its own layer;
/// the command line reaches the runs and the engines, never the catalog. `LayerTests` reads this list and every
/// `import` line under Sources/ and fails on a break of the rule.
let layers: [[String]] = [
    ["CairnCore"],
    // Archives in a source read in place (libarchive): below the walk and the hashing, which both read them.
    ["CairnArchive"],
    // Engines and storage: each stands on Core (the walk and the hashing on archives too; the values two share are Core's).
    ["CairnHashing", "CairnMedia", "CairnScanner", "CairnReconcile", "CairnPipeline", "CairnNarration", "CairnCatalog", "CairnWatch", "CairnTape", "CairnStore"],
    // The library's files in an S3-compatible bucket (AsyncHTTPClient): a target of its own, beside the folder store.
    ["CairnS3"],
    // The work queue several workers share, in PostgreSQL (postgres-nio): a target of its own, so the SQLite-only build
    // never compiles it.
    ["CairnQueue"],
    // The catalog in PostgreSQL, for a library several hosts work on: the same records as the SQLite catalog's.
    ["CairnPostgresCatalog"],
    // Metrics: what a run and a library export, rendered for Prometheus (swift-prometheus).
    ["CairnMetrics"],
    // Immich's generated API: it imports no cairn module.
    ["ImmichAPI"],
    // Immich's server as cairn talks to it: connection, identity, failures classified, retries, streamed uploads.
    ["CairnImmich"],
    // Library storage: layout, lock, originals store, temporary names, durable moves, group commit.
    ["CairnLibrary"],
    // The trash: journal, mover, restore, purge; the check of a store against the catalog.
    ["CairnTrash", "CairnCheck"],
    // The lanes' work (library stages, the destination seam, the import's pipeline), configuration, the read side.
    ["CairnStages", "CairnConfiguration", "CairnStatus"],
    // Immich as a destination: its upload stages, trash and restore, albums. Derivative work through the shared
    // queue: the jobs a worker runs, the stages an import queues them from.
    ["CairnImmichDestination", "CairnSharedWork"],
    // The import run, then sync and dry-run over it.
    ["CairnImport"],
    // Sync and dry-run over the import; a run opened on its library, catalog, queue and metrics in one place.
    ["CairnSync", "CairnRun"],
    // Tapes: a tape's clips chosen from the library, made by the media engine, joined by the tape core's rules.
    ["CairnTapeBuild"],
    // The read-only web face of a library: status page, status.json, /metrics.
    ["CairnServe"],
    ["cairn", "cairn-fuzz", "immich-double"],
]
let forbiddenImports: [(target: String, imported: String)] = [("cairn", "CairnCatalog")]

let package = Package(
    name: "cairn",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cairn", targets: ["cairn"]),
        // libFuzzer harnesses (scripts/fuzz) and the replay of their findings (the fuzz regression test).
        .executable(name: "cairn-fuzz", targets: ["cairn-fuzz"]),
        // Every library module, for the nested Benchmarks package.
        .library(name: "Cairn", targets: [
            "CairnCore", "CairnHashing", "CairnMedia", "CairnScanner", "CairnCatalog",
            "CairnPipeline", "CairnReconcile", "CairnNarration", "CairnLibrary", "CairnTrash", "CairnMetrics", "CairnStages",
            "CairnConfiguration", "CairnStatus", "CairnImmichDestination", "CairnImport", "CairnSync", "CairnQueue",
            "CairnSharedWork", "CairnTape", "CairnTapeBuild", "CairnPostgresCatalog", "CairnRun",
        ]),
    ],
    // `swift build --disable-default-traits` builds the SQLite-only cairn: no PostgreSQL client, no `--queue`.
    traits: [
        .trait(name: "SharedQueue",
               description: "Derivative work shared with workers through PostgreSQL: --queue, cairn worker, cairn queue status."),
        .default(enabledTraits: ["SharedQueue"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.90.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
    ],
    targets: [
        // System libraries from Debian, found through pkg-config.
        .systemLibrary(
            name: "COpenSSL", path: "CSystemLibs/COpenSSL",
            pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // libavutil, libswscale and libswresample are linked; libavformat and libavcodec (and the ~130 libraries Debian's build
        // links them to) are loaded on first use by CLibraryLoader, so commands that never touch a video start fast.
        .systemLibrary(
            name: "CFFmpeg", path: "CSystemLibs/CFFmpeg",
            pkgConfig: "libswscale",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev", "libswresample-dev"])]),
        // libheif and libjxl too: their codecs and libhwy (whose initialisers time the CPU) cost every command's start.
        .target(name: "CLibraryLoader", path: "CSystemLibs/CLibraryLoader"),
        // Specialist still decoders and colour management, each the field's standard for its formats.
        .systemLibrary(
            name: "CTurboJPEG", path: "CSystemLibs/CTurboJPEG",
            pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(
            name: "CHeif", path: "CSystemLibs/CHeif", providers: [.apt(["libheif-dev"])]),  // loaded: CLibraryLoader
        .systemLibrary(
            name: "CLibRaw", path: "CSystemLibs/CLibRaw", pkgConfig: "libraw_r", providers: [.apt(["libraw-dev"])]),
        .systemLibrary(
            name: "CLCMS2", path: "CSystemLibs/CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(
            name: "CTIFF", path: "CSystemLibs/CTIFF", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(
            name: "CJXL", path: "CSystemLibs/CJXL", providers: [.apt(["libjxl-dev"])]),  // loaded: CLibraryLoader
        .systemLibrary(
            name: "CPixbuf", path: "CSystemLibs/CPixbuf", pkgConfig: "gdk-pixbuf-2.0",
            providers: [.apt(["libgdk-pixbuf-2.0-dev"])]),
        .systemLibrary(
            name: "CWebP", path: "CSystemLibs/CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(
            name: "CArchive", path: "CSystemLibs/CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        // The SIGBUS guard for hashing through mappings: compiled C, so one handler and one state per process.
        .target(name: "CMappingGuard", path: "CSystemLibs/CMappingGuard", linkerSettings: [.linkedLibrary("crypto")]),
        // The fault handlers that leave evidence of a crash for the crash-loop guard: compiled C, one set a process.
        .target(name: "CCrashEvidence", path: "CSystemLibs/CCrashEvidence"),
        // Linux system calls Swift's Glibc module cannot reach (openat2).
        .systemLibrary(name: "CLinux", path: "CSystemLibs/CLinux"),
        // SQLite's C API for the one bulk insert that binds its values directly (the run tables' walk rows).
        .systemLibrary(name: "CSQLite", path: "CSystemLibs/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // glibc's malloc tuning (mallopt), which Swift's Glibc module leaves out.
        .systemLibrary(name: "CGlibcMalloc", path: "CSystemLibs/CGlibcMalloc"),

        // Values and small system helpers shared by every layer.
        .target(name: "CairnCore", dependencies: [
            .product(name: "NIOPosix", package: "swift-nio"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // C calls live only in these, behind Swift types (archives: libarchive; media: FFmpeg and the still decoders).
        .target(name: "CairnArchive", dependencies: [
            "CairnCore", "CArchive", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .target(name: "CairnHashing", dependencies: [
            "CairnCore", "CairnArchive", "COpenSSL", "CMappingGuard", "CLinux", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .target(name: "CairnMedia", dependencies: [
            "CairnCore", "CFFmpeg", "CLibraryLoader", "CTurboJPEG", "CHeif", "CLibRaw", "CLCMS2", "CWebP", "CTIFF", "CJXL",
            "CPixbuf", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // `cairn watch`: the source tree through inotify, when to sync (a pure state machine), systemd's notify protocol.
        .target(name: "CairnWatch", dependencies: ["CairnCore"]),
        // Derivative work shared by workers: leases, heartbeats, fenced completion, rescue, NOTIFY (PostgreSQL 15).
        .target(name: "CairnQueue", dependencies: [
            "CairnCore", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
        ]),
        // The catalog in PostgreSQL (postgres-nio): so far the import items and what their stages made, behind
        // `ItemCatalog`, the interface the SQLite catalog implements too.
        .target(name: "CairnPostgresCatalog", dependencies: [
            "CairnCore", "CairnCatalog", "CairnQueue",
            .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
        ]),
        // Source walking at openat/fstatat speed.
        .target(name: "CairnScanner", dependencies: ["CairnCore", "CairnArchive"]),
        // SQLite catalog (GRDB) and its migrations.
        .target(name: "CairnCatalog", dependencies: ["CairnCore", "CSQLite", .product(name: "GRDB", package: "GRDB.swift")]),
        // Pure logic: lanes and item state machine, reconciliation engine, narration model.
        // The scheduler's queues are swift-collections' `Deque` (built for swift-nio anyway).
        .target(name: "CairnPipeline", dependencies: ["CairnCore", .product(name: "DequeModule", package: "swift-collections")]),
        .target(name: "CairnReconcile", dependencies: ["CairnCore"]),
        // Tapes: the one tape format, clips named by content and format, the append-only playlist and its
        // readiness, as a pure state machine (the encoding is the media engine's).
        .target(name: "CairnTape", dependencies: ["CairnCore"]),
        .target(name: "CairnNarration", dependencies: ["CairnCore"]),
        // Metrics of a run and a library as values, rendered through swift-prometheus; the metrics
        // file for node_exporter's textfile collector and the Pushgateway push. Its own target: the SQLite-only
        // layers below never link the metrics libraries.
        .target(name: "CairnMetrics", dependencies: [
            "CairnCore", "CairnNarration",
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // A run over a library: wires the layers above together.
        .target(name: "CairnLibrary", dependencies: ["CLinux", "CCrashEvidence", "CairnCore", "CairnHashing", "CairnCatalog", "CairnStore"]),
        .target(name: "CairnTrash", dependencies: ["CairnCore", "CairnCatalog", "CairnReconcile", "CairnLibrary"]),
        // The lanes' work: the library's stages, the destination seam, the import's pipeline over the catalog,
        // `cairn thumbnail`'s batch, Live Photo pairing and sidecar linking.
        .target(name: "CairnStages", dependencies: [
            "CLinux", "CairnCore", "CairnArchive", "CairnHashing", "CairnMedia", "CairnScanner", "CairnCatalog", "CairnPipeline",
            "CairnReconcile", "CairnNarration", "CairnLibrary", "CairnTrash", "CairnStore",
        ]),
        // Settings: cairn.toml, CAIRN_* variables and flags, each value with where it came from.
        .target(name: "CairnConfiguration", dependencies: [
            "CairnPipeline", "CairnReconcile", .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        // The read side: status, the library browser, pending review, what the status page and the metrics read.
        .target(name: "CairnStatus", dependencies: [
            "CairnCore", "CairnHashing", "CairnMedia", "CairnCatalog", "CairnReconcile", "CairnNarration",
            "CairnLibrary", "CairnMetrics",
        ]),
        // Immich as a destination: upload stages, presence, trash and restore by run, albums.
        .target(name: "CairnImmichDestination", dependencies: [
            "CairnCore", "CairnArchive", "CairnHashing", "CairnMedia", "CairnScanner", "CairnCatalog", "CairnPipeline",
            "CairnReconcile", "CairnLibrary", "CairnTrash", "CairnImmich", "CairnStages",
        ]),
        // Derivative work through the shared queue: a worker's jobs (the library's own stages), an import's queued
        // stages and the wait for their results, the library's identity in the queue.
        .target(name: "CairnSharedWork", dependencies: [
            "CairnCore", "CairnCatalog", "CairnLibrary", "CairnMedia", "CairnPipeline", "CairnQueue", "CairnReconcile",
            "CairnStages", "CairnStatus", "CairnTrash", "CairnPostgresCatalog", "CairnStore",
        ]),
        // The import run: walk, hash, classify, the lanes, finish; its options, outcomes, narration and metrics.
        .target(name: "CairnImport", dependencies: [
            "CairnCore", "CairnArchive", "CairnHashing", "CairnScanner", "CairnCatalog", "CairnPipeline", "CairnNarration",
            "CairnLibrary", "CairnMetrics", "CairnStages", "CairnStatus", "CGlibcMalloc",
        ]),
        // Sync and dry-run: the import run with reconciliation between its phases, and the trash after.
        .target(name: "CairnSync", dependencies: [
            "CairnCore", "CairnArchive", "CairnScanner", "CairnCatalog", "CairnReconcile", "CairnNarration", "CairnLibrary",
            "CairnTrash", "CairnMetrics", "CairnStages", "CairnImport",
        ]),
        // Every run over a library opened in one place: the library and its lock, its catalog (SQLite or PostgreSQL),
        // the shared queue, the run's metrics; a queue worker's loop and the queue's state. The only module below the command line that the `SharedQueue` trait
        // changes.
        .target(name: "CairnRun", dependencies: [
            "CairnCatalog", "CairnCore", "CairnLibrary", "CairnPipeline", "CairnStages", "CairnStatus", "CairnImport",
            "CairnStore",
            .target(name: "CairnSharedWork", condition: .when(traits: ["SharedQueue"])),
            .target(name: "CairnQueue", condition: .when(traits: ["SharedQueue"])),
        ]),
        // `cairn tape build`: a tape's clips chosen from the library, made by the media engine a few at a time,
        // published by the tape core's rules, joined into one file at the end.
        .target(name: "CairnTapeBuild", dependencies: [
            "CairnCore", "CairnCatalog", "CairnLibrary", "CairnMedia", "CairnNarration", "CairnStatus", "CairnTape",
            "CairnStore",
        ]),
        // Immich's HTTP API (client, wire types, server stubs), generated by swift-openapi-generator from the filtered
        // spec beside it and committed (`Generated/`, written by scripts/generate-immich-client, which scripts/test runs
        // to check it): nothing hand-copied, and no build of cairn builds the generator.
        .target(
            name: "ImmichAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            // Generated code only: its warnings (a `public import` in each of the generator's files, used or not) are
            // the generator's and say nothing of cairn's code; the rest of cairn builds with none (scripts/test).
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
        // The Immich client: the generated API over AsyncHTTPClient, with what the spec does not say (failure classes,
        // retries, settling an ambiguous upload by checksum). Its own target: the HTTP stack stays out of the rest.
        .target(name: "CairnImmich", dependencies: [
            "CairnCore", "ImmichAPI",
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "_NIOFileSystem", package: "swift-nio"),
        ]),
        // Where a library's files live: the folder or a bucket, behind one small interface (`ObjectStore`).
        .target(name: "CairnStore", dependencies: ["CairnCore"]),
        // `cairn check`: the catalog's files and a store's objects merged in byte order, and what a repair may mend.
        .target(name: "CairnCheck", dependencies: ["CairnCore", "CairnCatalog", "CairnStore"]),
        // The S3-compatible store: Signature V4, the AWS settings conventions, requests over AsyncHTTPClient.
        .target(name: "CairnS3", dependencies: [
            "CairnCore", "CairnHashing", "CairnStore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // `cairn serve` and `cairn watch --listen`: the live status page, its event stream, status.json and /metrics over
        // Hummingbird, read-only.
        .target(name: "CairnServe", dependencies: [
            "CairnCore", "CairnCatalog", "CairnNarration", "CairnLibrary", "CairnMetrics", "CairnStatus", "CairnStore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // A stand-in Immich server for the tests and benchmarks, built from the same spec's server stubs over
        // Hummingbird: it keeps files on disk, models what Immich does beyond the spec, logs its traffic as NDJSON
        // (scripts/validate-immich-traffic checks it against the unfiltered spec) and injects faults by profile.
        .executableTarget(name: "immich-double", dependencies: [
            "CairnCore", "ImmichAPI", "COpenSSL",
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // The command line: argument parsing, output and wiring; the media and hash commands call their engines.
        .executableTarget(name: "cairn", dependencies: [
            "CairnCore", "CairnHashing", "CairnMedia", "CairnPipeline", "CairnReconcile", "CairnNarration", "CairnLibrary",
            "CairnTrash", "CairnStages", "CairnConfiguration", "CairnStatus", "CairnImmichDestination", "CairnImport",
            "CairnSync", "CairnImmich", "CairnMetrics", "CairnServe", "CairnWatch", "CairnTape", "CairnTapeBuild", "CairnRun",
            "CairnStore", "CairnS3", "CairnCheck",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: [
            // lld, which ships with the Swift toolchain, packs the relative relocations that the loader applies at every
            // start; the default linker's table of them stays resident for the whole run.
            .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]),
        ]),
        .executableTarget(name: "cairn-fuzz", dependencies: ["CairnCore", "CairnMedia"]),

        // Shared test support: temporary folders, media made with the ffmpeg CLI at test time, child processes, and
        // the doubles (an item store in memory, a hand-driven narration clock) the product never ships.
        .target(name: "CairnTesting", dependencies: ["CairnCore", "CairnPipeline", "CairnNarration"], path: "Tests/CairnTesting"),
        // The reconciliation decided from sets held in memory, with the catalog reads it needs: the oracle the
        // catalogs' SQL is tested against; the product never reconciles so. Beside it, what else only tests ask of
        // a catalog (`CatalogInspection`).
        .target(name: "CairnReconcileOracle", dependencies: [
            "CairnCore", "CairnReconcile", "CairnCatalog", "CairnPostgresCatalog", "CairnSync",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/CairnReconcileOracle"),
        .testTarget(name: "CairnCoreTests", dependencies: ["CairnCore"]),
        .testTarget(name: "CairnHashingTests", dependencies: ["CairnHashing", "CairnTesting"]),
        .testTarget(name: "CairnMediaTests", dependencies: ["CairnMedia", "CairnTesting"]),
        .testTarget(name: "CairnScannerTests", dependencies: ["CairnScanner", "CairnArchive", "CairnTesting"]),
        .testTarget(name: "CairnCatalogTests", dependencies: ["CairnCatalog", "CairnReconcileOracle", "CairnTesting"]),
        .testTarget(name: "CairnPipelineTests", dependencies: ["CairnPipeline", "CairnTesting"]),
        .testTarget(name: "CairnReconcileTests", dependencies: ["CairnReconcile", "CairnReconcileOracle", "CairnTesting"]),
        .testTarget(name: "CairnTapeTests", dependencies: ["CairnTape", "CairnTesting"]),
        // PostgresNIO itself: the race tests inject delays into the queue's statements with a trigger.
        .testTarget(name: "CairnQueueTests", dependencies: [
            "CairnQueue", "CairnCore", "CairnTesting", .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        // One contract suite, run on every catalog backend (SQLite, and PostgreSQL on the suite's cluster).
        .testTarget(name: "CairnCatalogContractTests", dependencies: [
            "CairnCatalog", "CairnPostgresCatalog", "CairnQueue", "CairnCore", "CairnTesting", "CairnSync", "CairnReconcile",
            "CairnLibrary", "CairnTrash", "CairnStatus", "CairnMetrics", "CairnReconcileOracle",
            // PostgresNIO itself: the lock-order tests hold a row in a transaction of their own.
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ]),
        .testTarget(name: "CairnNarrationTests", dependencies: ["CairnNarration", "CairnTesting"]),
        // One contract suite, run on every store (the folder, and S3 on the suite's SeaweedFS); the S3 signer
        // checked against botocore's.
        .testTarget(name: "CairnStoreTests", dependencies: [
            "CairnStore", "CairnS3", "CairnCore", "CairnTesting", "CairnCheck", "CairnCatalog", "CairnReconcileOracle",
        ]),
        .testTarget(name: "CairnServeTests", dependencies: [
            "CairnServe", "CairnCore", "CairnLibrary", "CairnNarration", "CairnStatus", "CairnTesting",
            .product(name: "Hummingbird", package: "hummingbird"),
        ]),
        .testTarget(name: "CairnWorkerTests", dependencies: [
            "CairnStages", "CairnConfiguration", "CairnStatus", "CairnImmichDestination", "CairnImport", "CairnSync",
            "CairnLibrary", "CairnTrash", "CairnCatalog", "CairnReconcile", "CairnTesting", "CairnPostgresCatalog",
            "CairnQueue", "CairnReconcileOracle", "CairnStore", "CairnS3",
        ]),
        .testTarget(name: "CairnMetricsTests", dependencies: ["CairnMetrics", "CairnCore", "CairnNarration", "CairnTesting"]),
        .testTarget(name: "CairnWatchTests", dependencies: ["CairnWatch", "CairnCore", "CairnTesting"]),
        .testTarget(name: "CairnImmichTests", dependencies: ["CairnImmich", "CairnCore", "immich-double", "CairnTesting"]),
        .testTarget(name: "CairnCLITests", dependencies: [
            "cairn", "CairnCore", "CairnCatalog", "CairnReconcile", "CairnLibrary", "CairnTrash", "CairnStages",
            "CairnConfiguration", "CairnStatus", "CairnImmichDestination", "CairnImport", "CairnSync",
            "CairnQueue", "CairnSharedWork", "CairnPipeline", "CairnRun", "CairnReconcileOracle", "CairnTesting",
            "CairnMedia", "CairnTapeBuild", "CairnStore", "CairnS3",
        ]),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds optimize across cairn's modules: the import's hot path crosses several (the pipeline, its stages,
// the library, Core's locks and system calls), and without this their generics run unspecialized across each seam.
for target in package.targets where target.type != .test && target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]
}
