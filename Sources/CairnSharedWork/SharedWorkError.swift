/// Why shared work could not start, in one line.
public struct SharedWorkError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
