import CFFmpeg

/// A still as a tape clip: decoded and turned upright once, fitted on the canvas, the same frame repeated
/// (nearly free to encode), or with Ken Burns a slow zoom into it; silence for sound.
struct TapeStillSource {
    let configuration: MediaConfiguration
    let path: String
    let seconds: Double
    let kenBurns: Bool
    let muxer: TapeMuxer

    func write(onSegment: (Int, Double) -> Void) throws(MediaError) {
        let settings = muxer.settings
        let picture = try PictureDecoder(configuration: configuration)
            .decodeStill(path: path, targetShortSide: min(settings.width, settings.height))
        let renderer = PictureRenderer(picture)
        let call = renderer.call
        let displayed = picture.displayedSize
        let canvas = try TapeCanvas(settings: settings, displayedWidth: Double(displayed.width),
                                    displayedHeight: Double(displayed.height), orientation: .identity, call: call)
        let flags = CFFmpeg_SWS_BICUBIC()
        // The master is rendered upright; Ken Burns keeps headroom to crop into.
        let headroom = kenBurns ? ClipWriter.kenBurnsEndZoom : 1
        let masterWidth = Int((Double(canvas.width) * headroom).rounded()) & ~1
        let masterHeight = Int((Double(canvas.height) * headroom).rounded()) & ~1
        let stored = picture.orientation.swapsDimensions ? (masterHeight, masterWidth) : (masterWidth, masterHeight)
        let master = try renderer.render(storedWidth: stored.0, storedHeight: stored.1, format: AV_PIX_FMT_YUV420P,
                                         flags: flags)
        if !kenBurns { try canvas.place(scaled: master, orientation: .identity) }
        let count = max(1, Int((seconds * Double(settings.framesPerSecond)).rounded()))
        let feed = try TapeAudioFeed(muxer: muxer)
        for index in 0..<count {
            try call.checkInterrupt()
            if kenBurns {
                let zoomed = try ClipWriter.kenBurnsFrame(master, index: index, count: count, width: canvas.width,
                                                          height: canvas.height, flags: flags, call: call)
                try canvas.place(scaled: zoomed, orientation: .identity)
            }
            try muxer.writeVideo(canvas.frame)
            try feed.encode(upTo: muxer.audioSamples(forFrames: muxer.videoFrames), silence: true)
            muxer.report(onSegment)
        }
        try feed.finish(total: muxer.audioSamples(forFrames: muxer.videoFrames))
    }
}
