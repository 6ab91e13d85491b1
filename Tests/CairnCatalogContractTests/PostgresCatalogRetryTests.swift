import CairnCore
@testable import CairnPostgresCatalog
import CairnTesting
import PostgresNIO
import Testing

/// `PostgresCatalog.failing`, the one way the catalog's operations reach the server: a try that never ends (as
/// postgres-nio's query on a connection the server had just closed) is given up at its limit and tried again.
@Suite struct PostgresCatalogRetryTests {
    @Test func aTryThatNeverEndsIsGivenUpAtItsLimitAndTriedAgain() async throws {
        let location = try CatalogBackend.freshDatabase()
        // The tries below never touch the client, so it need not run.
        let catalog = PostgresCatalog(library: "lib", client: PostgresClient(configuration: location.clientConfiguration()),
                                      tryTimeLimit: .seconds(2))
        let tries = Locked(0)
        let stuck = Locked<CheckedContinuation<Void, Never>?>(nil)
        let answer = try await catalog.failing("count its tries") {
            let attempt = tries.withLock { tries in
                tries += 1
                return tries
            }
            // The first try ignores its cancel and waits for the test alone.
            if attempt == 1 { await withCheckedContinuation { continuation in stuck.withLock { $0 = continuation } } }
            return attempt
        }
        // A later try's answer: on a loaded machine a quick try may meet its limit too before one gets through.
        #expect(answer >= 2)
        // Let the abandoned first try end, so nothing outlives the test (it may not have started waiting yet).
        while true {
            if let continuation = stuck.withLock({ $0 }) { continuation.resume(); break }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
