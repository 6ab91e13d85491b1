import CairnCore
import Foundation
import Testing

/// The budget's figure: given as text, or found in the cgroup hierarchy the process is in (laid out here as the
/// kernel shows it: `/proc/self/cgroup`, `/proc/self/mountinfo` and the controllers' files under `/sys/fs/cgroup`).
@Suite struct MemoryBudgetTests {
    static let gib: Int64 = 1 << 30
    static let mib: Int64 = 1 << 20

    static let sizes: [(String, Int64)] = [
        ("512M", 512 << 20), ("2G", 2 << 30), ("1.5G", 3 << 29), ("768MiB", 768 << 20), ("2gib", 2 << 30),
        (" 300m ", 300 << 20), ("1GB", 1 << 30),
    ]

    @Test(arguments: sizes)
    func aSizeReadsInMebibytesAndGibibytes(_ text: String, _ bytes: Int64) {
        #expect(MemoryBudget.parse(text) == bytes)
    }

    @Test(arguments: ["512", "2T", "G", "-1G", "1e3M", "lots", "", "0M"])
    func anythingElseIsNoSize(_ text: String) {
        #expect(MemoryBudget.parse(text) == nil)
    }

    @Test func aBudgetBelowTheLeastARunNeedsIsRefusedWithTheReason() {
        let limits = MemoryLimits(physicalMemory: 8 * Self.gib)
        #expect(throws: MemoryBudgetError.self) { try MemoryBudget.given("100M", origin: .option, limits: limits) }
        do {
            _ = try MemoryBudget.given("64M", origin: .option, limits: limits)
        } catch {
            #expect(error.reason.contains("128M"), "\(error.reason)")
        }
        #expect(throws: MemoryBudgetError.self) { try MemoryBudget.given("a lot", origin: .option, limits: limits) }
        #expect((try? MemoryBudget.given("128M", origin: .option, limits: limits))?.bytes == MemoryBudget.minimum)
    }

    @Test func withNoCgroupLimitTheBudgetIsHalfOfPhysicalMemory() {
        let budget = MemoryBudget.detected(MemoryLimits(physicalMemory: 2 * Self.gib))
        #expect(budget.bytes == Self.gib)
        #expect(budget.origin == .physicalMemory && budget.hardLimit == nil && !budget.isLimit)
    }

    @Test func aCgroupLimitLessItsMarginIsTheBudgetAndTheHardLimit() {
        let limits = MemoryLimits(cgroup: .init(bytes: 512 * Self.mib, file: "/sys/fs/cgroup/memory.max"),
                                  physicalMemory: 16 * Self.gib)
        let budget = MemoryBudget.detected(limits)
        #expect(budget.bytes == 384 * Self.mib)
        #expect(budget.hardLimit == 384 * Self.mib && budget.isLimit)
        #expect(budget.description.contains("/sys/fs/cgroup/memory.max"))
        // A budget given keeps the kernel's limit beside it.
        let given = try? MemoryBudget.given("2G", origin: .environment, limits: limits)
        #expect(given?.bytes == 2 * Self.gib && given?.hardLimit == 384 * Self.mib)
        #expect(given?.description.contains("CAIRN_MEMORY") == true && given?.description.contains("384 MiB") == true)
    }

    /// Lays out a `/proc/self` and `/sys/fs/cgroup` the way the kernel shows them.
    struct FakeRoot {
        let path: String

        init(cgroup: String, mountinfo: String, files: [String: String]) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path + "/proc/self", withIntermediateDirectories: true)
            try cgroup.write(toFile: path + "/proc/self/cgroup", atomically: true, encoding: .utf8)
            try mountinfo.write(toFile: path + "/proc/self/mountinfo", atomically: true, encoding: .utf8)
            for (file, text) in files {
                let folder = (path + file as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try text.write(toFile: path + file, atomically: true, encoding: .utf8)
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    static let v1Mounts = """
        31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
        """

    @Test func cgroupV1TakesTheTightestLimitOnTheWayUp() throws {
        let root = try FakeRoot(cgroup: "8:pids:/\n4:memory:/jobs/nightly\n1:cpu:/\n0::/\n", mountinfo: Self.v1Mounts, files: [
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
            "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes": "\(Self.gib)\n",
            "/sys/fs/cgroup/memory/jobs/nightly/memory.limit_in_bytes": "\(2 * Self.gib)\n",
        ])
        defer { root.remove() }
        let limits = MemoryLimits.read(root: root.path, physicalMemory: 8 * Self.gib)
        #expect(limits.cgroup == .init(bytes: Self.gib, file: "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes"))
        #expect(MemoryBudget.detected(limits).bytes == Self.gib - 128 * Self.mib)
    }

    @Test func cgroupV2ReadsMemoryMaxAndMaxMeansNone() throws {
        let mounts = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        let root = try FakeRoot(cgroup: "0::/system.slice/cairn.service\n", mountinfo: mounts, files: [
            "/sys/fs/cgroup/system.slice/memory.max": "max\n",
            "/sys/fs/cgroup/system.slice/cairn.service/memory.max": "\(768 * Self.mib)\n",
        ])
        defer { root.remove() }
        let limits = MemoryLimits.read(root: root.path, physicalMemory: 8 * Self.gib)
        #expect(limits.cgroup?.bytes == 768 * Self.mib)
        #expect(limits.cgroup?.file == "/sys/fs/cgroup/system.slice/cairn.service/memory.max")
    }

    @Test func insideAContainerTheNamespacesRootIsTheMountsRoot() throws {
        // The container sees its own cgroup as the mount's root; the kernel names the host's path in both files.
        let mounts = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n"
        let root = try FakeRoot(cgroup: "4:memory:/docker/abc\n", mountinfo: mounts, files: [
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "\(1536 * Self.mib)\n",
        ])
        defer { root.remove() }
        #expect(MemoryLimits.read(root: root.path, physicalMemory: 8 * Self.gib).cgroup?.bytes == 1536 * Self.mib)
    }

    @Test func aLimitAtOrAbovePhysicalMemoryOrNoHierarchyIsNoLimit() throws {
        let root = try FakeRoot(cgroup: "4:memory:/\n", mountinfo: Self.v1Mounts, files: [
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "\(16 * Self.gib)\n",
        ])
        defer { root.remove() }
        #expect(MemoryLimits.read(root: root.path, physicalMemory: 8 * Self.gib).cgroup == nil)
        let bare = try FakeRoot(cgroup: "", mountinfo: "", files: [:])
        defer { bare.remove() }
        let limits = MemoryLimits.read(root: bare.path, physicalMemory: 8 * Self.gib)
        #expect(limits.cgroup == nil)
        #expect(MemoryBudget.detected(limits) == MemoryBudget(bytes: 4 * Self.gib, origin: .physicalMemory))
    }
}
