import Glibc

/// A value behind a pthread mutex. `Synchronization.Mutex` is a futex the thread sanitizer cannot see: every
/// access it orders looks like a race under `scripts/sanitize thread`. pthread mutexes are intercepted by it.
public final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// What `withLock(when:)` waits on; `withLockNotifying` wakes it.
    @usableFromInline let changed: UnsafeMutablePointer<pthread_cond_t>
    @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
        // The mutex and its condition share one allocation: a run makes a few of these per phase of every file.
        let conditionOffset = MemoryLayout<pthread_mutex_t>.stride.roundedUp(to: MemoryLayout<pthread_cond_t>.alignment)
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: conditionOffset + MemoryLayout<pthread_cond_t>.size,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<pthread_cond_t>.alignment))
        mutex = storage.initializeMemory(as: pthread_mutex_t.self, repeating: pthread_mutex_t(), count: 1)
        changed = (storage + conditionOffset).initializeMemory(as: pthread_cond_t.self, repeating: pthread_cond_t(), count: 1)
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init: \(rc)")
        let condition = pthread_cond_init(changed, nil)
        precondition(condition == 0, "pthread_cond_init: \(condition)")
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Blocks the calling thread until `ready` holds for the value, then runs `body` with the lock held. For the
    /// waits between `BlockingPool`'s threads only (never on a cooperative thread); whatever makes `ready` hold
    /// must change the value through `withLockNotifying`.
    @inlinable
    public func withLock<Result>(when ready: (Value) -> Bool, _ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(value) { pthread_cond_wait(changed, mutex) }
        return body(&value)
    }

    /// As `withLock`, then wakes every thread waiting in `withLock(when:)` to look again.
    @inlinable
    public func withLockNotifying<Result>(_ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }

    /// Runs `body` with the value, holding the lock; `body` must not take this lock again.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

private extension Int {
    func roundedUp(to alignment: Int) -> Int { (self + alignment - 1) / alignment * alignment }
}
