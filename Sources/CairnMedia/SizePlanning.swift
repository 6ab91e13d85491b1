/// Pure size arithmetic for derivatives: tested alone, no FFmpeg.
enum SizePlanning {
    /// `width`x`height` scaled so the short side is at most `shortSide`; never enlarged.
    static func fitShortSide(width: Int, height: Int, shortSide: Int) -> (width: Int, height: Int) {
        let short = min(width, height)
        guard short > shortSide, shortSide > 0 else { return (width, height) }
        let scale = Double(shortSide) / Double(short)
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// WebP's largest side; JPEG's is larger, so one cap serves both derivative formats.
    static let maxDerivativeSide = 16383

    /// `width`x`height` scaled down so the long side is at most `longSide`; never enlarged.
    static func capLongSide(width: Int, height: Int, longSide: Int) -> (width: Int, height: Int) {
        let long = max(width, height)
        guard long > longSide else { return (width, height) }
        let scale = Double(longSide) / Double(long)
        return (max(1, Int((Double(width) * scale).rounded(.down))), max(1, Int((Double(height) * scale).rounded(.down))))
    }

    /// The largest `lowres` level (each level halves both sides) whose decode keeps the short side
    /// at least `margin` times `targetShortSide`, so the final filter still has pixels to average.
    static func lowresLevel(width: Int, height: Int, targetShortSide: Int, maxLevel: Int, margin: Double = 2) -> Int {
        let short = min(width, height)
        var level = 0
        while level < maxLevel {
            let next = level + 1
            let decoded = (short + (1 << next) - 1) >> next
            if Double(decoded) < margin * Double(targetShortSide) { break }
            level = next
        }
        return level
    }

    /// A clip size for a displayed `width`x`height` still: inside `maxLongSide`x`maxShortSide`
    /// (either orientation), never enlarged, both sides even (yuv420p needs it), at least 2.
    static func clipSize(width: Int, height: Int, maxLongSide: Int, maxShortSide: Int) -> (width: Int, height: Int) {
        let landscape = width >= height
        let (boundWidth, boundHeight) = landscape ? (maxLongSide, maxShortSide) : (maxShortSide, maxLongSide)
        let scale = min(1, Double(boundWidth) / Double(width), Double(boundHeight) / Double(height))
        func even(_ value: Double) -> Int { max(2, Int(value.rounded()) & ~1) }
        return (even(Double(width) * scale), even(Double(height) * scale))
    }

    /// The crop rectangle (in a master of `width`x`height`) for frame `index` of `count` of a slow zoom
    /// from the whole master in to `1 / endZoom` of it, centred; even offsets and sizes.
    static func kenBurnsCrop(width: Int, height: Int, index: Int, count: Int, endZoom: Double)
        -> (x: Int, y: Int, width: Int, height: Int)
    {
        let progress = count > 1 ? Double(index) / Double(count - 1) : 0
        let zoom = 1 + (endZoom - 1) * progress
        let cropWidth = max(2, Int((Double(width) / zoom).rounded()) & ~1)
        let cropHeight = max(2, Int((Double(height) / zoom).rounded()) & ~1)
        return (((width - cropWidth) / 2) & ~1, ((height - cropHeight) / 2) & ~1, cropWidth, cropHeight)
    }
}
