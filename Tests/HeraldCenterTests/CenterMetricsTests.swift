import HeraldAPNs
import Testing

@testable import HeraldCenter

/// Metric labels and recorded reasons stay within known, documented sets.
@Suite struct CenterMetricsTests {
    @Test func anAPNsReasonHeraldDoesNotKnowIsLabelledUnknown() {
        #expect(CenterMetrics.label(for: .unknown("Anything APNs may send \(Int.random(in: 0..<1_000_000))")) == "Unknown")
        #expect(CenterMetrics.label(for: .payloadTooLarge) == "PayloadTooLarge")
        #expect(CenterMetrics.label(for: .serviceUnavailable) == "ServiceUnavailable")
    }

    @Test func aSendWithoutAnAnswerIsRecordedWithAHeraldCode() {
        #expect(APNsError.deadlineExceeded.reason == "Timeout")
        #expect(APNsError.connectionClosed.reason == "ConnectionFailed")
        #expect(APNsError.shutdown.reason == "ClientStopped")
        // Refused before sending: Apple's own names, and not worth a retry.
        #expect(APNsError.payloadTooLarge.reason == "PayloadTooLarge")
        #expect(!APNsError.payloadTooLarge.isRetryable)
        #expect(APNsError.deadlineExceeded.isRetryable)
    }
}
