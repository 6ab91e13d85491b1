import CairnCore
import Foundation
import Testing

/// Which check of the destination a sync makes: a full one when asked, when none was made, when the last is
/// `everyDays` old or dated in the future (a clock set back); the trash's in between.
@Suite struct DestinationCheckPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func aFullCheckIsDueWhenNeverMadeAskedForOrOld() {
        let policy = DestinationCheckPolicy(everyDays: 7)
        #expect(policy.kind(lastFull: nil, now: Self.now) == .full)
        #expect(policy.kind(lastFull: Self.now.addingTimeInterval(-6 * 86_400), now: Self.now) == .trash)
        #expect(policy.kind(lastFull: Self.now.addingTimeInterval(-7 * 86_400), now: Self.now) == .full)
        #expect(policy.kind(lastFull: Self.now.addingTimeInterval(3_600), now: Self.now) == .full, "a clock set back")
        var asked = policy
        asked.fullNow = true
        #expect(asked.kind(lastFull: Self.now, now: Self.now) == .full)
        #expect(DestinationCheckPolicy(everyDays: 1).kind(lastFull: Self.now.addingTimeInterval(-86_399), now: Self.now) == .trash)
    }
}
