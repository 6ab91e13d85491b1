import Foundation

/// Whether work may start, as far as memory goes (`MemoryBudget.admission`).
public enum MemoryAdmission: Sendable, Equatable {
    /// It may, holding this much of the budget.
    case admitted(Int64)
    /// The budget has no room yet.
    case waits
    /// More than the kernel allows media work: it would be killed.
    case aboveLimit(Int64, limit: Int64)
}

/// The memory a run may give to decodes and encodes at once: the one bound on what media work holds. The scheduler
/// admits a phase only while the estimates of the phases running, its own added, stay within `bytes` (one whose
/// estimate is larger runs alone); a phase whose estimate is above `hardLimit` fails with a `.memory` reason instead
/// of being killed by the kernel.
///
/// By default it is the smaller of the tightest cgroup limit on the process (less `margin(below:)`, for what the
/// process holds besides media work) and half of physical memory; `--memory`, `CAIRN_MEMORY` or `memory` in
/// `cairn.toml` set it.
public struct MemoryBudget: Sendable, Hashable, CustomStringConvertible {
    /// Where the figure came from, as `cairn config` says it.
    public enum Origin: Sendable, Hashable {
        case option, environment, configurationFile
        /// A cgroup's limit: the file it was read from.
        case cgroup(String)
        case physicalMemory
    }

    public var bytes: Int64
    /// What the kernel allows media work at most (the cgroup limit less the margin), when a cgroup limits the process.
    public var hardLimit: Int64?
    public var origin: Origin

    /// A limit the process must keep (a cgroup's, or one given), not a share of a machine with memory to spare.
    public var isLimit: Bool { hardLimit != nil || origin != .physicalMemory }

    /// Below this, no import can run its ordinary clips: a smaller `--memory` is a usage error.
    public static let minimum: Int64 = 128 << 20

    public init(bytes: Int64, hardLimit: Int64? = nil, origin: Origin) {
        self.bytes = bytes
        self.hardLimit = hardLimit
        self.origin = origin
    }

    /// Whether work estimated at `bytes` may start beside work already admitted with `inUse`: the one rule the
    /// pipeline's scheduler and a queue worker's jobs both follow. Within the budget it starts; one estimated above
    /// the budget starts once nothing else holds memory (it runs alone, never starved); one above `hardLimit` never
    /// starts, as the kernel would kill the process. A budget given above the hard limit is held to it.
    public func admission(of bytes: Int64, besides inUse: Int64) -> MemoryAdmission {
        guard bytes > 0 else { return .admitted(0) }
        if let hardLimit, bytes > hardLimit { return .aboveLimit(bytes, limit: hardLimit) }
        return inUse == 0 || inUse + bytes <= min(self.bytes, hardLimit ?? .max) ? .admitted(bytes) : .waits
    }

    /// What a cgroup limit leaves to media work: the process's own libraries, catalog and buffers come first.
    public static func margin(below limit: Int64) -> Int64 { max(128 << 20, limit / 8) }

    /// The budget when nothing sets it: the tightest cgroup limit less its margin, or half of physical memory,
    /// whichever is smaller.
    public static func detected(_ limits: MemoryLimits) -> MemoryBudget {
        let half = limits.physicalMemory / 2
        guard let cgroup = limits.cgroup else { return MemoryBudget(bytes: half, origin: .physicalMemory) }
        let allowed = max(minimum, cgroup.bytes - margin(below: cgroup.bytes))
        return allowed <= half
            ? MemoryBudget(bytes: allowed, hardLimit: allowed, origin: .cgroup(cgroup.file))
            : MemoryBudget(bytes: half, hardLimit: allowed, origin: .physicalMemory)
    }

    /// A budget given as text (`512M`, `2G`, `1.5G`, `768MiB`), checked; `limits` keeps the kernel's hard limit.
    public static func given(_ text: String, origin: Origin, limits: MemoryLimits) throws(MemoryBudgetError) -> MemoryBudget {
        guard let bytes = parse(text) else {
            throw MemoryBudgetError(reason: "'\(text)' is not a size (use MiB or GiB, e.g. 512M or 2G)")
        }
        guard bytes >= minimum else {
            throw MemoryBudgetError(reason: "\(text) is below the least a run needs, \(minimum >> 20)M")
        }
        let hardLimit = limits.cgroup.map { max(minimum, $0.bytes - margin(below: $0.bytes)) }
        return MemoryBudget(bytes: bytes, hardLimit: hardLimit, origin: origin)
    }

    /// For a command with no library to read: `option` if given, else `CAIRN_MEMORY`, else what the limits allow.
    public static func resolved(option: String?, environment: [String: String], limits: MemoryLimits = .read())
        throws(MemoryBudgetError) -> MemoryBudget {
        if let option { return try given(option, origin: .option, limits: limits) }
        if let text = environment["CAIRN_MEMORY"], !text.isEmpty { return try given(text, origin: .environment, limits: limits) }
        return detected(limits)
    }

    /// Bytes of `512M`, `2G`, `1.5G`, `512MiB`, `2GiB` (M and G are MiB and GiB, any case); nil for anything else.
    public static func parse(_ text: String) -> Int64? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        if number.hasSuffix("IB") { number = number.dropLast(2) } else if number.hasSuffix("B") { number = number.dropLast() }
        let shift: Int64
        switch number.last {
        case "M": shift = 20
        case "G": shift = 30
        default: return nil
        }
        number = number.dropLast()
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number),
              value.isFinite, value > 0, value < 16_777_216 else { return nil }
        return Int64((value * Double(Int64(1) << shift)).rounded())
    }

    /// `512 MiB`, `1.5 GiB`.
    public static func formatted(_ bytes: Int64) -> String {
        if bytes >= 1 << 30 {
            let gib = Double(bytes) / Double(1 << 30)
            return gib == gib.rounded() ? "\(Int(gib)) GiB" : String(format: "%.1f GiB", gib)
        }
        return "\(bytes >> 20) MiB"
    }

    /// Where the figure came from, in words.
    public var originDescription: String {
        switch origin {
        case .option: return "--memory"
        case .environment: return "CAIRN_MEMORY"
        case .configurationFile: return "memory in cairn.toml"
        case .cgroup(let file): return "the cgroup limit in \(file), less a margin"
        case .physicalMemory: return "half of physical memory"
        }
    }

    /// `416 MiB (half of physical memory)`, and what a cgroup allows when that is not the figure itself.
    public var description: String {
        var text = "\(Self.formatted(bytes)) (\(originDescription))"
        if case .cgroup = origin {} else if let hardLimit {
            text += "; the cgroup's limit leaves media work \(Self.formatted(hardLimit)) at most"
        }
        return text
    }
}

/// A `--memory` value that cannot be used.
public struct MemoryBudgetError: Error, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// The memory limits on this process: the tightest cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`, on
/// its own cgroup and every one above it) and physical memory.
public struct MemoryLimits: Sendable, Hashable {
    public struct CgroupLimit: Sendable, Hashable {
        public var bytes: Int64
        /// The file the limit was read from.
        public var file: String

        public init(bytes: Int64, file: String) {
            self.bytes = bytes
            self.file = file
        }
    }

    public var cgroup: CgroupLimit?
    public var physicalMemory: Int64

    public init(cgroup: CgroupLimit? = nil, physicalMemory: Int64) {
        self.cgroup = cgroup
        self.physicalMemory = physicalMemory
    }

    /// The limits of this process; `root` is `/` but for tests, which lay out a `proc` and `sys` of their own.
    public static func read(root: String = "/", physicalMemory: Int64 = System.physicalMemory) -> MemoryLimits {
        MemoryLimits(cgroup: tightestCgroupLimit(root: root, physicalMemory: physicalMemory), physicalMemory: physicalMemory)
    }

    /// Each memory hierarchy the process is in (from `/proc/self/cgroup`, mounted where `/proc/self/mountinfo`
    /// says), walked from the process's cgroup up to the mount's root; a limit at or above physical memory is none.
    static func tightestCgroupLimit(root: String, physicalMemory: Int64) -> CgroupLimit? {
        let base = root.hasSuffix("/") ? String(root.dropLast()) : root
        guard let membership = try? String(contentsOfFile: base + "/proc/self/cgroup", encoding: .utf8),
              let mounts = try? String(contentsOfFile: base + "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        var tightest: CgroupLimit?
        for line in membership.split(separator: "\n") {
            // hierarchy-ID:controllers:path; v2 is `0::/path`.
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let isV2 = fields[0] == "0" && fields[1].isEmpty
            guard isV2 || fields[1].split(separator: ",").contains("memory") else { continue }
            guard let mount = mountPoint(in: mounts, v2: isV2) else { continue }
            let files = isV2 ? ["memory.max"] : ["memory.limit_in_bytes"]
            var path = String(fields[2])
            // Inside a container the path named may be the namespace's root, mounted at the mount point itself.
            if path.hasPrefix(mount.root) { path = String(path.dropFirst(mount.root.count)) }
            while true {
                let folder = base + mount.point + (path == "/" ? "" : path)
                for file in files {
                    let location = folder + "/" + file
                    guard let text = try? String(contentsOfFile: location, encoding: .utf8),
                          let bytes = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                          bytes > 0, bytes < physicalMemory else { continue }
                    if bytes < tightest?.bytes ?? .max {
                        tightest = CgroupLimit(bytes: bytes, file: String(location.dropFirst(base.count)))
                    }
                }
                guard path != "/", !path.isEmpty else { break }
                path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
                if path.isEmpty { path = "/" }
            }
        }
        return tightest
    }

    /// Where the v1 memory controller or the v2 hierarchy is mounted, and which cgroup is the mount's root.
    static func mountPoint(in mountinfo: String, v2: Bool) -> (point: String, root: String)? {
        for line in mountinfo.split(separator: "\n") {
            // id parent major:minor root mount-point options [optional...] - fstype source super-options
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let fields = halves[0].split(separator: " "), tail = halves[1].split(separator: " ")
            guard fields.count >= 5, tail.count >= 3 else { continue }
            if v2 ? tail[0] == "cgroup2" : tail[0] == "cgroup" && tail[2].split(separator: ",").contains("memory") {
                let root = String(fields[3])
                return (String(fields[4]), root == "/" ? "" : root)
            }
        }
        return nil
    }
}
