import CairnCore
@testable import CairnPipeline
import Foundation
import Testing

@Suite("Item state machine")
struct ItemStateTests {
    static func failure(_ phase: Lane, retryable: Bool, attempts: Int = 1) -> ItemState {
        .failed(ItemFailure(phase: phase, reason: "boom", attempts: attempts, retryable: retryable))
    }

    /// One of every shape of state.
    static let samples: [ItemState] = [.placeholder, .queued, .transferring, .probing, .thumbnailing, .synthesizing,
                                       .ready, .cancelled]
        + Lane.allCases.flatMap { [failure($0, retryable: true), failure($0, retryable: false)] }

    /// The legal moves, written out by hand, for one route.
    static func legalMoves(on route: ItemRoute) -> Set<[ItemState]> {
        var moves: Set<[ItemState]> = [
            [.placeholder, .queued], [.queued, .transferring], [.cancelled, .queued],
            [.transferring, .probing], [.probing, .thumbnailing], [.transferring, .ready],
        ]
        if route.includesSynthesis {
            moves.insert([.thumbnailing, .synthesizing])
        } else {
            moves.insert([.thumbnailing, .ready])
        }
        moves.insert([.synthesizing, .ready])
        for lane in Lane.allCases {
            moves.insert([lane.activeState, failure(lane, retryable: true)])
            moves.insert([lane.activeState, failure(lane, retryable: false)])
            if lane != .synthesis || route.includesSynthesis {
                moves.insert([failure(lane, retryable: true), lane.activeState])
            }
        }
        if !route.includesSynthesis {
            // A clip that failed retryably, with clips switched off since: done without it.
            moves.insert([failure(.synthesis, retryable: true), .ready])
        }
        for state in samples where state != .ready && state != .cancelled { moves.insert([state, .cancelled]) }
        return moves
    }

    @Test("every pair of states is legal exactly when the table says so", arguments: [ItemRoute.withClip, .withoutClip])
    func everyTransition(route: ItemRoute) {
        let legal = Self.legalMoves(on: route)
        var checked = 0
        for from in Self.samples {
            for to in Self.samples {
                let expected = legal.contains([from, to])
                #expect(from.canMove(to: to, on: route) == expected, "\(from) -> \(to) on \(route)")
                #expect((try? from.moving(to: to, on: route)) == (expected ? to : nil))
                checked += 1
            }
        }
        #expect(checked == Self.samples.count * Self.samples.count)
    }

    @Test("a still with clips walks every phase; a video skips synthesis")
    func happyPaths() throws {
        var state = ItemState.placeholder
        for next in [ItemState.queued, .transferring, .probing, .thumbnailing, .synthesizing, .ready] {
            state = try state.moving(to: next, on: .withClip)
        }
        #expect(state == .ready)
        #expect(ItemRoute(kind: .video, clipsEnabled: true) == .withoutClip)
        #expect(ItemRoute(kind: .photo, clipsEnabled: false) == .withoutClip)
        #expect(ItemRoute(kind: .photo, clipsEnabled: true) == .withClip)
        #expect(try ItemState.thumbnailing.moving(to: .ready, on: .withoutClip) == .ready)
    }

    @Test("illegal moves throw a typed error that names both states")
    func illegalMoveError() {
        #expect(throws: IllegalItemTransition.self) { try ItemState.queued.moving(to: .ready, on: .withClip) }
        do {
            _ = try ItemState.ready.moving(to: .queued, on: .withClip)
            Issue.record("ready -> queued was allowed")
        } catch {
            #expect(error.description == "illegal item state transition ready -> queued")
        }
    }

    @Test("a failure must be in the phase the item was in and count at least one try")
    func failureMustMatchPhase() {
        #expect(!ItemState.probing.canMove(to: Self.failure(.transfer, retryable: true), on: .withClip))
        #expect(!ItemState.probing.canMove(to: Self.failure(.metadata, retryable: true, attempts: 0), on: .withClip))
        #expect(!Self.failure(.metadata, retryable: true).canMove(to: .transferring, on: .withClip))
        #expect(!Self.failure(.metadata, retryable: false).canMove(to: .probing, on: .withClip))
    }

    @Test("an item left in synthesis after clips were switched off may only finish or fail")
    func synthesisAfterClipsOff() {
        #expect(ItemState.synthesizing.canMove(to: .ready, on: .withoutClip))
        #expect(ItemState.synthesizing.canMove(to: Self.failure(.synthesis, retryable: false), on: .withoutClip))
        #expect(!Self.failure(.synthesis, retryable: true).canMove(to: .synthesizing, on: .withoutClip))
    }

    @Test("resume points: the phase the item was in; nothing for finished items")
    func resumePoints() {
        let expected: [(ItemState, Lane?)] = [
            (.placeholder, .transfer), (.queued, .transfer), (.transferring, .transfer), (.probing, .metadata),
            (.thumbnailing, .thumbnail), (.synthesizing, .synthesis), (.ready, nil), (.cancelled, nil),
            (Self.failure(.thumbnail, retryable: true), .thumbnail), (Self.failure(.thumbnail, retryable: false), nil),
        ]
        for (state, lane) in expected {
            #expect(state.resumeLane == lane, "\(state)")
            #expect(state.isTerminal == (lane == nil))
        }
    }

    @Test("states round-trip through their one codec, stored flat in the columns a table holds")
    func persistence() throws {
        for state in Self.samples {
            let data = try JSONEncoder().encode(state)
            #expect(try JSONDecoder().decode(ItemState.self, from: data) == state)
        }
        let failed = try JSONSerialization.jsonObject(
            with: JSONEncoder().encode(Self.failure(.metadata, retryable: false, attempts: 3))) as? [String: Any]
        #expect(failed?["state"] as? String == "failed" && failed?["phase"] as? String == "metadata")
        #expect(failed?["reason"] as? String == "boom" && failed?["attempts"] as? Int == 3)
        #expect(failed?["retryable"] as? Bool == false)
        let probing = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ItemState.probing)) as? [String: Any]
        #expect(probing?["state"] as? String == "probing" && probing?["phase"] is NSNull)
    }

    @Test("columns naming no state are rejected")
    func invalidColumns() {
        for columns in [#"{"state":"done"}"#, #"{"state":"failed"}"#,
                        #"{"state":"failed","phase":"nope","attempts":1,"retryable":true}"#] {
            #expect(throws: DecodingError.self, "\(columns)") {
                try JSONDecoder().decode(ItemState.self, from: Data(columns.utf8))
            }
        }
    }

    @Test("a destination that makes its own derivatives ends the route after the transfer (the upload)")
    func routeEndingAfterTheTransfer() throws {
        var configuration = PipelineConfiguration.defaults(cores: 2)
        configuration.destinationMakesDerivatives = true
        let item = ImportItem(relativePath: "a.jpg", sourceRoot: "/s", kind: .photo, byteCount: 1,
                              checksum: try #require(Checksum(hex: String(repeating: "ab", count: 20))))
        let route = configuration.route(for: item)
        #expect(route.lanes == [.transfer])
        #expect(Lane.transfer.next(on: route) == nil)
        #expect(ItemState.transferring.canMove(to: .ready, on: route))
        #expect(!ItemState.transferring.canMove(to: .probing, on: route))
        configuration.destinationMakesDerivatives = false
        #expect(configuration.route(for: item).lanes == [.transfer, .metadata, .thumbnail, .synthesis])
    }
}

extension ItemRoute {
    static let withoutClip = ItemRoute(includesSynthesis: false)
}
