import CairnCore
import Foundation

/// `--json`: every event as one JSON object per line (fields in `NarrationRecord`'s documentation).
public final class JSONLinesRenderer: NarrationHandler {
    private let sink: any TextSink
    private let encoder = Locked(NarrationJSON.encoder())

    public init(sink: any TextSink) { self.sink = sink }

    public func handle(_ record: NarrationRecord) {
        sink.write(encoder.withLock { NarrationJSON.line(for: record, encoder: $0) })
    }
}
