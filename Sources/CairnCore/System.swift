#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Facts about the machine the worker runs on.
public enum System {
    /// Cores online, the default width for CPU-bound work.
    public static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Bytes of physical memory: what the page cache can hold at most.
    public static var physicalMemory: Int64 {
        Int64(max(0, sysconf(Int32(_SC_PHYS_PAGES)))) * Int64(max(0, sysconf(Int32(_SC_PAGESIZE))))
    }
}
