import CairnCore

extension MemoryFootprint {
    /// What a phase of an item not probed in this run (it resumed past its probe) is taken to hold: a generous
    /// guess from its size and kind, never above what a run may hold (`MemoryBudget.minimum`), so such an item at
    /// worst runs alone, and is never refused for memory on a guess.
    ///
    /// The transfer copies through a fixed buffer: nothing. The probe reads a header, except a JPEG XL's or an
    /// animated WebP's, which it reads whole: a still's size.
    public static func unprobed(_ item: ImportItem, in lane: Lane) -> Int64 {
        let ceiling = MemoryBudget.minimum
        switch (lane, item.kind) {
        case (.transfer, _): return 0
        case (.metadata, .photo): return min(item.byteCount, ceiling)
        case (.metadata, _): return 16 << 20
        // A compressed still decodes to ten to forty times its bytes.
        case (.thumbnail, .photo): return min(max(64 << 20, item.byteCount * 24), ceiling)
        case (.thumbnail, _): return 96 << 20
        case (.synthesis, _): return ceiling
        }
    }
}
