/// `body`'s value, with `close` run after it whether it returned or threw: the `defer` an async close cannot be.
package func closing<Value>(_ close: () async -> Void, _ body: () async throws -> Value) async throws -> Value {
    let value: Value
    do { value = try await body() } catch {
        await close()
        throw error
    }
    await close()
    return value
}
