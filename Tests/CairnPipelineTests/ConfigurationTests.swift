import CairnCore
@testable import CairnPipeline
import Testing

@Suite("Lane configuration")
struct ConfigurationTests {
    @Test("defaults scale with cores")
    func defaults() {
        let two = PipelineConfiguration.defaults(cores: 2)
        #expect([two.transfer.width, two.metadata.width, two.thumbnail.width, two.synthesis.width] == [4, 4, 2, 2])
        let eight = PipelineConfiguration.defaults(cores: 8)
        #expect([eight.transfer.width, eight.metadata.width, eight.thumbnail.width, eight.synthesis.width] == [4, 4, 8, 8])
        #expect(PipelineConfiguration.defaults(cores: 1).synthesis.width == 1)
        #expect(two.clipsEnabled && two.maxAttempts == 3 && two.maxErrors == nil)
    }

    @Test("transfer timeout is max(15 s, bytes / 20 MB/s); others fixed")
    func timeouts() {
        let configuration = PipelineConfiguration.defaults(cores: 2)
        #expect(configuration.transfer.timeout.duration(forBytes: 0) == .seconds(15))
        #expect(configuration.transfer.timeout.duration(forBytes: 300_000_000) == .seconds(15))
        #expect(configuration.transfer.timeout.duration(forBytes: 1_000_000_000) == .seconds(50))
        #expect(configuration.transfer.timeout.duration(forBytes: 1_010_000_000) == .milliseconds(50_500))
        #expect(configuration.metadata.timeout.duration(forBytes: 1_000_000_000) == .seconds(30))
    }

    @Test("a --lanes spec sets widths, timeouts and inboxes")
    func laneSpec() throws {
        let base = PipelineConfiguration.defaults(cores: 2)
        let configured = try base.applying(laneSpec: "transfer=4, thumbnail=2,synthesis=1,timeout.transfer=30s,timeout.thumbnail=1.5s,inbox.metadata=16")
        #expect(configured.transfer.width == 4 && configured.thumbnail.width == 2 && configured.synthesis.width == 1)
        #expect(configured.transfer.timeout == .scaled(minimum: .seconds(30), bytesPerSecond: 20_000_000))
        #expect(configured.thumbnail.timeout == .fixed(.milliseconds(1500)))
        #expect(configured.metadata.inboxCapacity == 16)
        #expect(configured.metadata.width == base.metadata.width)
    }

    @Test("the lanes that wait for their mark start as many phases ahead as they run; a width brings its own")
    func phasesAhead() throws {
        let base = PipelineConfiguration.defaults(cores: 2)
        #expect([base.transfer.ahead, base.metadata.ahead, base.thumbnail.ahead, base.synthesis.ahead] == [0, 4, 2, 2])
        let widened = try base.applying(laneSpec: "transfer=8,thumbnail=3")
        // Three running, one more for a small item, three ahead.
        #expect(widened.transfer.ahead == 0 && widened.thumbnail.ahead == 3 && widened.thumbnail.slots == 7)
        #expect(base.thumbnail.smallItemRunners == 1 && base.metadata.smallItemRunners == 0)
        let explicit = try base.applying(laneSpec: "ahead.thumbnail=0,thumbnail=3,ahead.metadata=1")
        #expect(explicit.thumbnail.ahead == 0 && explicit.thumbnail.width == 3 && explicit.metadata.ahead == 1)
    }

    @Test("while marks gather, the lanes that wait for them start more ahead, unless --lanes said how many")
    func phasesAheadWhileMarksGather() throws {
        var local = PipelineConfiguration.defaults(cores: 2)
        local.gatherMarks(for: .zero)
        #expect(local == PipelineConfiguration.defaults(cores: 2), "no linger changes nothing")

        var server = PipelineConfiguration.defaults(cores: 2)
        server.gatherMarks(for: .milliseconds(2))
        #expect(server.markLinger == .milliseconds(2))
        #expect([server.transfer.ahead, server.metadata.ahead, server.thumbnail.ahead, server.synthesis.ahead]
                == [0, 12, 12, 12])

        var given = try PipelineConfiguration.defaults(cores: 2).applying(laneSpec: "ahead.thumbnail=3,metadata=20")
        given.gatherMarks(for: .milliseconds(2))
        #expect(given.thumbnail.ahead == 3, "a number given with --lanes stays")
        #expect(given.metadata.ahead == 20, "a wide lane's own default is more than enough")
    }

    @Test("bad --lanes specs say what is wrong", arguments: [
        ("", "empty --lanes value (expected e.g. transfer=4,thumbnail=2)"),
        ("thumb=2", "unknown lane 'thumb' in 'thumb=2' (expected transfer (upload for Immich), metadata, thumbnail or synthesis)"),
        ("transfer=0", "width in 'transfer=0' must be a whole number from 1 to 256"),
        ("transfer=four", "width in 'transfer=four' must be a whole number from 1 to 256"),
        ("transfer", "'transfer' in --lanes is not key=value (expected e.g. thumbnail=2)"),
        ("transfer=2,transfer=3", "'transfer' appears twice in --lanes 'transfer=2,transfer=3'"),
        ("timeout.transfer=30x", "timeout in 'timeout.transfer=30x' is not a positive duration (use e.g. 500ms, 30s, 2m, 1h)"),
        ("transfer=2,,", "empty entry in --lanes 'transfer=2,,'"),
        ("speed.transfer=2", "unknown key 'speed.transfer' in --lanes (expected <lane>, timeout.<lane>, inbox.<lane>, ahead.<lane> or decoders; lanes: transfer, metadata, thumbnail, synthesis)"),
        ("ahead.thumbnail=-1", "ahead in 'ahead.thumbnail=-1' must be a whole number from 0 to 256"),
    ])
    func badLaneSpecs(spec: String, message: String) {
        #expect(throws: LaneSpecError(message: message)) {
            try PipelineConfiguration.defaults(cores: 2).applying(laneSpec: spec)
        }
    }

    @Test("durations parse with units")
    func durations() {
        #expect(parseDuration("500ms") == .milliseconds(500))
        #expect(parseDuration("30s") == .seconds(30))
        #expect(parseDuration("2m") == .seconds(120))
        #expect(parseDuration("1h") == .seconds(3600))
        #expect(parseDuration("45") == .seconds(45))
        #expect(parseDuration("s") == nil)
        #expect(parseDuration("-3s") == nil)
        #expect(parseDuration("3d") == nil)
    }

    @Test("backoff doubles, caps, and adds up to the jitter fraction")
    func backoff() {
        let policy = RetryPolicy(base: .seconds(1), cap: .seconds(10), jitter: 1...1.2)
        #expect((1...5).map { policy.delay(after: $0, draw: 0) }
            == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10)])
        #expect(policy.delay(after: 2, draw: 0.5) == .milliseconds(2200))
        #expect(policy.delay(after: 40, draw: 0.999) < .seconds(12))
    }
}
