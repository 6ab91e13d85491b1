@testable import CairnMedia
import Testing

/// What a file's name tells the engine before it reads the file: its extension only, in any case.
@Suite struct FileNameTests {
    @Test func aJPEGIsNamedByItsExtensionInAnyCase() {
        #expect(MediaEngine.namesJPEG("/photos/2024/IMG_0001.JPG"))
        #expect(MediaEngine.namesJPEG("scan.jpeg") && MediaEngine.namesJPEG("a.Jpe"))
        #expect(!MediaEngine.namesJPEG("/photos/trip.jpg/IMG_0001.heic"))
        #expect(!MediaEngine.namesJPEG("/photos/notes.jpgx") && !MediaEngine.namesJPEG("/photos/jpg"))
        #expect(MediaEngine.namesJPEG("/Été/Île.jpg"))
    }

    @Test func aRawIsNamedByItsExtensionOrToldByItsMagic() {
        #expect(RawDecoder.isRaw(path: "/cards/DSC_0001.NEF", header: []))
        #expect(RawDecoder.isRaw(path: "IMG_1.cr3", header: []))
        #expect(!RawDecoder.isRaw(path: "/cards/raw.nef/IMG_1.tif", header: []))
        #expect(!RawDecoder.isRaw(path: "/cards/IMG_1.tif", header: Array("II*\u{0}".utf8)))
        #expect(RawDecoder.isRaw(path: "/cards/IMG_1.bin", header: Array("FUJIFILMCCD-RAW 0201".utf8)))
    }
}
