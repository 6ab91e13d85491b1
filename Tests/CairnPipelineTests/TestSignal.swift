import Foundation

/// Lets a test wait, without sleeping, until some condition over shared fakes holds.
/// Every fake calls `changed()` after it changes; waiting predicates are re-checked then.
final class TestSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [(predicate: @Sendable () -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    func changed() {
        let ready = lock.withLock {
            var ready: [CheckedContinuation<Void, Never>] = []
            var waiting: [(predicate: @Sendable () -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
            for waiter in waiters {
                if waiter.predicate() { ready.append(waiter.continuation) } else { waiting.append(waiter) }
            }
            waiters = waiting
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func wait(until predicate: @escaping @Sendable () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = lock.withLock {
                if predicate() { return true }
                waiters.append((predicate, continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
    }
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withValue<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
    var current: Value { lock.withLock { value } }
}
