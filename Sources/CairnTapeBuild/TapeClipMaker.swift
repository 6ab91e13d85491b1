import CairnCore
import CairnMedia
import CairnTape

/// Makes one clip's folder with the media engine, in the tape's one format.
struct TapeClipMaker: Sendable {
    let settings: TapeBuildSettings
    let format = TapeFormat.standard

    /// Encodes `entry` into `folder`, telling each segment's duration as its file is complete.
    func make(_ entry: TapeEntry, into folder: String, effort: TapeClipRequest.Effort, interrupt: MediaInterrupt,
              onSegment: (Double) -> Void) throws -> [Double] {
        let source: TapeClipRequest.Source = entry.isPicture
            ? .still(seconds: settings.stillSeconds, kenBurns: settings.kenBurns)
            : .video(maxSeconds: entry.kind == .still ? settings.stillSeconds : settings.maxClipSeconds)
        let request = TapeClipRequest(sourcePath: entry.mediaPath, source: source, settings: format, folder: folder,
                                      effort: effort)
        return try TapeClipEncoder(configuration: settings.media).encode(request, interrupt: interrupt) { _, duration in onSegment(duration) }
    }
}
