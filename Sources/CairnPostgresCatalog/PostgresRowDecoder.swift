import CairnCore
import Foundation
import PostgresNIO

extension PostgresRowSequence {
    /// Every row as a `Record` (its `CodingKeys` are the columns), in order.
    func records<Record: Decodable>(_ type: Record.Type) async throws -> [Record] {
        var records: [Record] = []
        for try await row in self { records.append(try Record(from: PostgresRowDecoder(row))) }
        return records
    }

    /// The one text column of every row read as a checksum, in order; a value that is not one is skipped.
    func checksums() async throws -> [Checksum] {
        var checksums: [Checksum] = []
        for try await hex in decode(String.self) { if let checksum = Checksum(hex: hex) { checksums.append(checksum) } }
        return checksums
    }
}

/// Decodes a `Decodable` record from a PostgreSQL row by column name, so a record keeps its one codec (its
/// `CodingKeys` are the columns) whichever catalog read it. A value PostgresNIO decodes itself (text, integers,
/// booleans, doubles, timestamps) is read from its cell; a JSON column through `JSONDecoder`; any other (a checksum,
/// an id, a raw-value enum) decodes from the cell as a single value.
struct PostgresRowDecoder: Decoder {
    /// The row's cells, by column name.
    let cells: PostgresRandomAccessRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ row: PostgresRow) { cells = row.makeRandomAccess() }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns<Key>(cells: cells))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Self.unsupported("a row as a list") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Self.unsupported("a row as one value") }

    static func unsupported(_ what: String, path: [any CodingKey] = []) -> DecodingError {
        DecodingError.typeMismatch(Any.self, .init(codingPath: path, debugDescription: "\(what) is not read from PostgreSQL"))
    }

    /// `cell` decoded as `T`: by PostgresNIO when it can, else through `T`'s own `Decodable` over the cell.
    static func decode<T: Decodable>(_ type: T.Type, from cell: PostgresCell) throws -> T {
        if let native = T.self as? any PostgresDecodable.Type {
            func read<Native: PostgresDecodable>(_ native: Native.Type) throws -> Native { try cell.decode(Native.self) }
            // `T` is `native`, so the cast always succeeds.
            return try read(native) as! T
        }
        if cell.dataType == .jsonb || cell.dataType == .json, var bytes = cell.bytes {
            // A value stored as JSON (a run's counts): binary jsonb starts with its format's version.
            if cell.dataType == .jsonb && cell.format == .binary { bytes.moveReaderIndex(forwardBy: 1) }
            return try JSONDecoder().decode(T.self, from: Data(bytes.readableBytesView))
        }
        return try T(from: CellDecoder(cell: cell))
    }

    private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let cells: PostgresRandomAccessRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { cells.compactMap { Key(stringValue: $0.columnName) } }

        func contains(_ key: Key) -> Bool { cells.contains(key.stringValue) }

        func decodeNil(forKey key: Key) throws -> Bool { try cell(key).bytes == nil }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try PostgresRowDecoder.decode(type, from: cell(key))
        }

        func nestedContainer<Nested: CodingKey>(keyedBy type: Nested.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<Nested> { throw PostgresRowDecoder.unsupported("a nested record", path: [key]) }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw PostgresRowDecoder.unsupported("a nested list", path: [key])
        }
        func superDecoder() throws -> any Decoder { throw PostgresRowDecoder.unsupported("a super decoder") }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw PostgresRowDecoder.unsupported("a super decoder") }

        private func cell(_ key: Key) throws -> PostgresCell {
            guard cells.contains(key.stringValue) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "the row has no column \(key.stringValue)"))
            }
            return cells[key.stringValue]
        }
    }

    /// One cell as a single value (an `ItemID` over a bigint, a `Checksum` over text).
    private struct CellDecoder: Decoder, SingleValueDecodingContainer {
        let cell: PostgresCell
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw PostgresRowDecoder.unsupported("column \(cell.columnName) as a record")
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw PostgresRowDecoder.unsupported("column \(cell.columnName) as a list")
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func decodeNil() -> Bool { cell.bytes == nil }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try PostgresRowDecoder.decode(type, from: cell) }
    }
}
