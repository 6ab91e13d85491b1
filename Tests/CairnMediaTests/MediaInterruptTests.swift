import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// A timed-out phase interrupts its engine call: FFmpeg's I/O through its interrupt callback, cairn's encode
/// and decode loops by checking between frames and packets. The call fails as retryable `interrupted`.
@Suite("Media interrupt")
struct MediaInterruptTests {
    let folder: TemporaryDirectory
    let engine = MediaEngine()
    init() throws { folder = try TemporaryDirectory(prefix: "cairn-interrupt") }

    private func interrupted(_ body: (MediaInterrupt) throws(MediaError) -> Void) -> MediaError? {
        let interrupt = MediaInterrupt()
        interrupt.interrupt()
        do { try body(interrupt) } catch { return error }
        return nil
    }

    @Test func aClipBeingEncodedStopsBetweenFrames() throws {
        let still = try MediaFixtures.jpeg(at: folder.subpath("a.jpg"), width: 640, height: 480)
        let error = interrupted { (interrupt) throws(MediaError) in
            _ = try engine.synthesizeClip(source: still, to: folder.subpath("a.mp4"), interrupt: interrupt)
        }
        #expect(error?.category == .interrupted && error?.isRetryable == true, "\(String(describing: error))")
        // The same call without an interrupt succeeds: nothing else stopped it.
        #expect(try engine.synthesizeClip(source: still, to: folder.subpath("b.mp4")).width > 0)
    }

    @Test func aVideoBeingOpenedStopsAtFFmpegsInterruptCallback() throws {
        let video = try MediaFixtures.video(at: folder.subpath("v.mp4"))
        let error = interrupted { (interrupt) throws(MediaError) in _ = try engine.probe(path: video, interrupt: interrupt) }
        #expect(error?.category == .interrupted, "\(String(describing: error))")
        let poster = interrupted { (interrupt) throws(MediaError) in
            _ = try engine.renderDerivatives(source: video, kind: .video, thumbnail: folder.subpath("v.webp"), preview: nil,
                                             interrupt: interrupt)
        }
        #expect(poster?.category == .interrupted, "\(String(describing: poster))")
        #expect(try engine.probe(path: video).kind == .video)
    }
}
