import Foundation
import Testing

@testable import heraldctl

@Suite struct TableRendererTests {
    @Test func columnsAreAlignedWithoutTrailingSpaces() {
        let table = TableRenderer(["TAG", "DEVICES"], rows: [["vip", "12"], ["beta-testers", "3"], ["x", ""]])
        #expect(
            table.render() == """
                TAG           DEVICES
                vip           12
                beta-testers  3
                x
                """
        )
    }

    @Test func controlCharactersFromTheServerAreEscaped() {
        let rendered = TableRenderer(["NAME"], rows: [["evil\u{1B}[2Jname\nnext"]]).render()
        #expect(rendered == "NAME\nevil\\u{1b}[2Jname\\u{a}next")
        #expect(!rendered.contains("\u{1B}"))
    }

    @Test func fieldsAlignTheirValues() {
        #expect(TableRenderer.fields([("msg_id", "42"), ("cid", "order-1")]) == "msg_id  42\ncid     order-1")
    }
}

@Suite struct ProgressBarTests {
    @Test func theBarShowsWhereCopiesAreInPlainASCII() {
        var report = ReceivedReport(messageID: "m1")
        report.targeted = 20
        report.deliveredTCP = 10
        report.sentAPNs = 4
        report.failedAPNs = 2
        report.waiting = 2
        report.pending = 2
        let line = ProgressBar(color: false, width: 200).render(report)
        #expect(
            line == "[####################========xxxx++++....]  90%  targeted 20  tcp 10  apns 4  failed 2  waiting 2  opened 0  pending 2"
        )
    }

    @Test func aDoneMessageIsAHundredPercentAndTheBarNeverOverflows() {
        var report = ReceivedReport(messageID: "m1")
        report.targeted = 2
        report.deliveredTCP = 2
        report.sentAPNs = 2
        report.done = true
        let line = ProgressBar(color: false, width: 200).render(report)
        #expect(line.hasPrefix("[" + String(repeating: "#", count: 20) + String(repeating: "=", count: 20) + "] 100%"))
    }

    @Test func aMessageThatIsNotDoneNeverShowsAHundredPercent() {
        var report = ReceivedReport(messageID: "m1")
        report.targeted = 1000
        report.deliveredTCP = 1000
        #expect(ProgressBar.percent(report) == 99)
        report.pending = 500
        #expect(ProgressBar.percent(report) == 50)
        report.targeted = 0
        #expect(ProgressBar.percent(report) == 0)
    }

    @Test func theReportReadsTheServersFailureListAndMissingCounts() throws {
        let json =
            #"{"msg_id": "m1", "targeted": 3, "apns_failed": 3, "apns_failures": [{"reason": "BadDeviceToken", "count": 2}, {"reason": "Unregistered", "count": 1}], "done": true}"#
        let report = try JSONDecoder().decode(ReceivedReport.self, from: Data(json.utf8))
        #expect(report.apnsFailures == ["BadDeviceToken": 2, "Unregistered": 1])
        #expect(report.waiting == 0)
        #expect(report.done)
        let keyed = #"{"msg_id": "m1", "apns_failures": {"Unregistered": 4}}"#
        #expect(try JSONDecoder().decode(ReceivedReport.self, from: Data(keyed.utf8)).apnsFailures == ["Unregistered": 4])
    }

    @Test func colourUsesANSIAndResetsAtTheEnd() {
        var report = ReceivedReport(messageID: "m1")
        report.targeted = 4
        report.failedAPNs = 1
        let line = ProgressBar(color: true, width: 120).render(report)
        #expect(line.contains("\u{1B}[31m█"))
        #expect(line.contains("\u{1B}[0m]"))
    }

    @Test func failuresAreSummarisedMostFrequentFirst() {
        var report = ReceivedReport(messageID: "m1")
        report.apnsFailures = ["Unregistered": 1, "BadDeviceToken": 3, "ExpiredToken": 1]
        #expect(report.failureSummary == "BadDeviceToken 3, ExpiredToken 1, Unregistered 1")
    }

    @Test func credentialsTheServerDoesNotUseAreShownAsNotUsed() throws {
        let json = #"""
            {"type": "token", "bundle_id": "com.example.app", "environment": "production", "key_id": "ABC123DEFG",
             "team_id": "DEF123GHIJ", "updated_at": "2026-11-25T18:00:00Z", "status": "broken", "problem": "InvalidProviderToken",
             "sent_to": "sandbox", "note": "this server sends APNs traffic to its local APNs sandbox"}
            """#
        let status = try JSONDecoder().decode(APNsStatus.self, from: Data(json.utf8))
        let fields = Dictionary(uniqueKeysWithValues: status.fields)
        #expect(fields["sent_to"] == "sandbox: NOT USED (this server sends APNs traffic to its local APNs sandbox)")
        #expect(fields["status"] == "broken (InvalidProviderToken)")
    }
}
