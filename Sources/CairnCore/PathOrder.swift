import Glibc

/// Paths in the bytewise order of their UTF-8: the order of SQLite's `BINARY` collation and PostgreSQL's
/// `COLLATE "C"`, the order in which the walk hands files over and the catalog keys a source's snapshot, so the two
/// can be merged. (`<` on `String` compares by canonical equivalence: the same order for NFC names, but slower, and
/// not the catalog's order for others.)
public enum PathOrder {
    /// Whether `a` comes before `b`.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        let inPlace = a.utf8.withContiguousStorageIfAvailable { a in
            b.utf8.withContiguousStorageIfAvailable { b in compare(a, b) < 0 }
        }
        if let inPlace, let inPlace { return inPlace }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The indices of `keys` in their order: the keys' bytes are laid end to end once, so the sort moves integers
    /// and compares bytes in place, copying no file and no string per comparison (the walk sorts every folder).
    public static func sortedIndices(of keys: [String]) -> [Int] {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        bytes.reserveCapacity(keys.reduce(0) { $0 + $1.utf8.count })
        ends.reserveCapacity(keys.count)
        for key in keys {
            bytes.append(contentsOf: key.utf8)
            ends.append(bytes.count)
        }
        var order = Array(keys.indices)
        bytes.withUnsafeBufferPointer { all in
            func key(_ index: Int) -> UnsafeBufferPointer<UInt8> {
                let start = index == 0 ? 0 : ends[index - 1]
                return UnsafeBufferPointer(rebasing: all[start..<ends[index]])
            }
            order.sort { compare(key($0), key($1)) < 0 }
        }
        return order
    }

    /// Negative, zero or positive as `a` comes before, is, or comes after `b`.
    package static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int32 {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return order }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}

/// A relative path's folder: what a sidecar is matched within, a store's folder listing, a trash move's parent.
public enum RelativePath {
    /// The folder holding `path` ("" at the root): all of it before its last slash.
    public static func folder(of path: String) -> String { path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "" }
}
