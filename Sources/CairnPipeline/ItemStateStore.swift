import CairnCore

/// Where item records live between runs (the catalog; memory in the scheduler's tests).
///
/// The scheduler calls `save` from one writer task, in order, batching whatever piled up while the
/// previous save ran; a batch may hold several moves for one item, oldest first, and the last record
/// wins. A move's products (what its phase made) are saved with it, in the same commit. A move is final
/// for the scheduler once `save` returns, so commit before returning. A thrown error stops the run:
/// `PipelineScheduler.run` rethrows it.
public protocol ItemStateStore: Sendable {
    func save(_ moves: [ItemMove]) async throws

    /// Sets the in-flight flag of these items, and nothing else (not their states, whatever records of theirs are
    /// still on their way to `save`): the marks of phases about to decode, saved ahead of the full saves so the
    /// phases need not wait for them. Commit before returning; durable against a crash of the process is enough.
    func saveMarks(_ marks: [InFlightMark]) async throws
}

/// A store that keeps nothing: for a batch whose items end with the process (`cairn thumbnail`).
public struct UnkeptItemStateStore: ItemStateStore {
    public init() {}
    public func save(_ moves: [ItemMove]) async throws {}
    public func saveMarks(_ marks: [InFlightMark]) async throws {}
}
