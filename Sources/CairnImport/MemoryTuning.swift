import CGlibcMalloc
import CairnCore

/// Process-wide memory settings for a long run over a big folder; called once, first thing, by the `cairn`
/// executable (and by benchmarks that stand in for it).
public enum MemoryTuning {
    /// Caps glibc's malloc arenas at the core count (at least 2). The lanes' blocking work runs on whichever of
    /// the pool's threads is free, and by default each thread may open an arena of its own that keeps the memory
    /// it freed; the cap lowers a long import's peak RSS at no measurable cost in speed
    /// (`cairn-bench import --rss-files 1000 10000`).
    @discardableResult
    public static func limitMallocArenas(to count: Int = max(2, System.coreCount)) -> Bool {
        CGlibcMalloc_set_arena_limit(Int32(clamping: count)) == 1
    }

    /// Serves every block of 128 KiB or more with a mapping of its own, returned when freed. A process that
    /// opens and closes one video encoder after another (a tape build) otherwise keeps each one's frames in the
    /// heap after it is gone; the import, which reuses same-sized buffers, keeps glibc's adaptive default.
    @discardableResult
    public static func returnLargeBlocksToTheSystem(from bytes: Int = 128 << 10) -> Bool {
        CGlibcMalloc_set_mmap_threshold(Int32(clamping: bytes)) == 1
    }

    /// Releases the free pages inside malloc's heaps (`malloc_trim`). An import calls it once per page of items:
    /// what a page's work freed is otherwise kept by the process, and a run over a million files grows with it.
    public static func releaseFreePages() {
        _ = CGlibcMalloc_release_free_pages()
    }
}
