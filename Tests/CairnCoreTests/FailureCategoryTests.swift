import CairnCore
import Foundation
import SystemPackage
import Testing

/// A failure's category comes from typed facts where it happens; its English is never read back.
@Suite struct FailureCategoryTests {
    @Test(arguments: [
        (Errno.permissionDenied, FailureCategory.permission), (.notPermitted, .permission),
        (.noSuchFileOrDirectory, .notFound), (.notDirectory, .notFound), (.noSpace, .noSpace),
        (.diskQuotaExceeded, .noSpace), (.ioError, .io), (.timedOut, .timeout), (.badFileDescriptor, .io),
    ])
    func aSystemCallsFailureIsCategorisedByItsErrno(_ code: Errno, _ category: FailureCategory) {
        #expect(SystemCallError("write", path: "/x", code: code).failure.category == category)
    }

    @Test func wordsInTheReasonDecideNothing() {
        // The printed text of a failure that happens to read like a timeout or like damaged media.
        #expect(FailureReason("HTTP 502: bad gateway").category == .other)
        #expect(FailureReason("timed out").category == .other)
        #expect(FailureReason(operation: "immich upload", "HTTP 502: bad gateway", category: .server).category == .server)
    }

    @Test func anErrorThatDescribesItsFailureKeepsItsCategory() {
        struct Opaque: Error {}
        let full = SystemCallError("write", path: "/lib/a.jpg", code: .noSpace)
        #expect(FailureReason(full) == full.failure)
        #expect(FailureReason(full).category == .noSpace)
        let opaque = FailureReason(Opaque())
        #expect(opaque.category == .other)
        #expect(opaque.operation == nil)
    }

    @Test func aStoredCategoryReadsBackAndAnUnknownOrMissingOneIsOther() {
        for category in FailureCategory.allCases { #expect(FailureCategory(stored: category.rawValue) == category) }
        #expect(FailureCategory(stored: nil) == .other)
        #expect(FailureCategory(stored: "cosmic_ray") == .other)
    }

    @Test func aFailedLinesCategoryIsWrittenBesideItsReason() throws {
        let entry = FileOutcomeEntry(path: "a.jpg", outcome: .failed(
            phase: .transfer, reason: FailureReason(operation: "write", "No space left on device", category: .noSpace)))
        let line = String(decoding: try FileOutcomeEntry.jsonLines([entry]), as: UTF8.self)
        #expect(line.contains(#""category":"no_space""#))
        #expect(line.contains(#""reason":"write: No space left on device""#))
        let read = try JSONDecoder().decode(FileOutcomeEntry.self, from: Data(line.utf8))
        #expect(read.outcome.reason?.category == .noSpace)
    }
}
