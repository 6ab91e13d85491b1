import CairnStages
import Foundation

/// Points where the tests stop a real run on purpose, so that a signal lands where they mean it to and not by
/// timing. Unset, as they are outside the tests, they do nothing.
enum TestHooks {
    /// `CAIRN_TEST_PAUSE_BEFORE_PAIRING=FILE`: after the lanes and before Live Photo pairing, the run creates FILE
    /// and waits while it exists, or until the run is stopped (a signal).
    static func pauseBeforePairing(until cancellation: PipelineCancellation) async {
        guard let marker = ProcessInfo.processInfo.environment["CAIRN_TEST_PAUSE_BEFORE_PAIRING"], !marker.isEmpty,
              FileManager.default.createFile(atPath: marker, contents: nil) else { return }
        while FileManager.default.fileExists(atPath: marker), !cancellation.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
