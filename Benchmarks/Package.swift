// swift-tools-version:6.1
import PackageDescription

// Benchmarks live in their own package so the root's `swift build` and `swift test`
// never build benchmark tooling. Every benchmark runs cairn and its peers
// (sha1sum, openssl, vipsthumbnail, ffmpeg, ...) side by side on the same files
// in one run and prints ratios.
let package = Package(
    name: "cairn-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "cairn", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "cairn-bench",
            dependencies: [
                .product(name: "Cairn", package: "cairn"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/cairn-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
