import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

@Suite("Picture renderer")
struct PictureRendererTests {
    /// libswscale read packed RGB two pixels to a chroma sample, so at an odd width it read one pixel past each row,
    /// whatever the buffer held there: thumbnails of pictures with alpha or a colour profile (which go through RGB)
    /// had a right edge whose colour changed from run to run. On a picture of one colour every chroma sample is the
    /// same; here a half-transparent red PNG 667 wide (its decoded rows odd too) to a thumbnail 333 wide.
    @Test func anOddWidthsLastChromaColumnIsThePicturesOwnColour() throws {
        let folder = try TemporaryDirectory()
        let png = try MediaFixtures.pngWithAlpha(at: folder.subpath("red.png"), width: 667, height: 500)
        let picture = try PictureDecoder(configuration: MediaConfiguration()).decodeStill(path: png, targetShortSide: 250)
        let frame = try PictureRenderer(picture).render(storedWidth: 333, storedHeight: 250,
                                                        format: ImageFormat.jpeg.pixelFormat, flags: 4)  // bicubic
        let chromaWidth = (frame.width + 1) / 2, chromaHeight = (frame.height + 1) / 2
        #expect(chromaWidth == 167)
        for plane in 1...2 {
            let base = try #require(frame.plane(plane))
            let first = Int(base[0])
            var differing: [(x: Int, y: Int, value: UInt8)] = []
            for y in 0..<chromaHeight {
                for x in 0..<chromaWidth where abs(Int(base[y * frame.linesize(plane) + x]) - first) > 1 {
                    differing.append((x, y, base[y * frame.linesize(plane) + x]))
                }
            }
            let uniform = differing.isEmpty
            #expect(uniform, "plane \(plane): \(differing.count) samples differ from \(first), first \(differing.prefix(3))")
        }
    }
}
