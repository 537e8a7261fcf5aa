import Testing

@testable import HeraldAPNs

/// Metric labels and recorded reasons stay within known, documented sets.
@Suite struct APNsChannelMetricsTests {
    @Test func anAPNsReasonHeraldDoesNotKnowIsLabelledUnknown() {
        #expect(APNsChannelMetrics.label(for: .unknown("Anything APNs may send \(Int.random(in: 0..<1_000_000))")) == "Unknown")
        #expect(APNsChannelMetrics.label(for: .payloadTooLarge) == "PayloadTooLarge")
        #expect(APNsChannelMetrics.label(for: .serviceUnavailable) == "ServiceUnavailable")
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
