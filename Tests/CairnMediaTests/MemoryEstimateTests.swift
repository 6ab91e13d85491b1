import CairnCore
@testable import CairnMedia
import Testing

/// The media settings a memory budget allows, and the estimates that follow from them. (The table's figures are
/// measured against real decodes by `MemoryLimitTests`, each fixture in a process of its own.)
@Suite struct MemoryEstimateTests {
    static let mebibyte: Int64 = 1 << 20

    @Test func aBudgetHoldsEachFilesRouteUnderItAndALimitGivesEachClipOneEncoderThread() {
        let roomy = MediaConfiguration.within(MemoryBudget(bytes: 12 << 30, origin: .physicalMemory))
        #expect(roomy == MediaConfiguration(), "a machine with memory to spare keeps the defaults")

        let cgroup = MediaConfiguration.within(MemoryBudget(bytes: 384 * Self.mebibyte, hardLimit: 384 * Self.mebibyte,
                                                            origin: .cgroup("memory.max")))
        #expect(cgroup.maxDecodeBytes == 192 << 20 && cgroup.maxStillBytes == 192 << 20)
        #expect(cgroup.clipEncoderThreads == 1)

        // A budget given above what the cgroup allows is held to the cgroup's.
        let above = MediaConfiguration.within(MemoryBudget(bytes: 2 << 30, hardLimit: 300 * Self.mebibyte, origin: .option))
        #expect(above.maxDecodeBytes == 150 << 20)
    }

    static func heif(width: Int, height: Int, bitDepth: Int = 8) -> MediaProbe {
        var probe = MediaProbe(container: "heif", kind: .photo,
                               streams: [.init(index: 0, type: "video", codec: "hevc", width: width, height: height)],
                               width: width, height: height)
        probe.bitDepth = bitDepth
        return probe
    }

    @Test func aHEIFTooLargeToDecodeWholeIsEstimatedAtItsEmbeddedThumbnail() {
        let header = StillHeader(bytes: [UInt8](repeating: 0, count: 32))
        let probe = Self.heif(width: 16320, height: 12240)  // a 200 MP phone HEIC
        let whole = MemoryEstimate.footprint(of: probe, header: header, fileBytes: 40 << 20,
                                             configuration: .within(MemoryBudget(bytes: 12 << 30, origin: .physicalMemory)))
        var decodesWhole = MediaConfiguration()
        decodesWhole.maxDecodeBytes = 2 << 30
        let allowed = MemoryEstimate.footprint(of: probe, header: header, fileBytes: 40 << 20, configuration: decodesWhole)
        // Above `maxDecodeBytes` the decoder takes the embedded thumbnail: the estimate follows it.
        #expect(whole.thumbnail < 100 * Self.mebibyte, "\(whole.thumbnail >> 20) MiB")
        #expect(allowed.thumbnail > 1000 * Self.mebibyte, "\(allowed.thumbnail >> 20) MiB")
    }

    @Test func oneEncoderThreadHoldsLessThanX264sOwnChoice() {
        let header = StillHeader(bytes: [UInt8](repeating: 0, count: 32))
        let probe = Self.heif(width: 4032, height: 3024)
        var limited = MediaConfiguration()
        limited.clipEncoderThreads = 1
        let own = MemoryEstimate.footprint(of: probe, header: header, fileBytes: 2 << 20, configuration: MediaConfiguration(), cores: 2)
        let one = MemoryEstimate.footprint(of: probe, header: header, fileBytes: 2 << 20, configuration: limited, cores: 2)
        // A 1440x1080 clip: 12 bytes a pixel for each of the two more threads x264 takes on 2 cores.
        #expect(own.clip - one.clip == Int64(1440 * 1080 * 12 * 2), "\(own.clip - one.clip)")
        #expect(one.thumbnail == own.thumbnail)
    }
}
