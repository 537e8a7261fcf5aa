import Foundation
import Testing

@testable import HeraldCore

/// The SMS provider's URL is checked as openapi.yaml states it, and what passes is a URL
/// Foundation reads (the sender's requests are made from it).
@Suite struct SMSProviderURLTests {
    @Test(arguments: [
        "http://sms.example.com", "HTTPS://sms.example.com:8443/v1/send?key=a%20b&x=1#top", "http://10.0.0.7/send",
        "https://a.b/p;q=1/(x)*~", "http://localhost:8080/",
    ])
    func aPlainHTTPURLIsTaken(_ url: String) {
        #expect(SMSHTTPProviderConfiguration.isPlainHTTPURL(url))
        #expect(URL(string: url) != nil)
    }

    @Test(arguments: [
        "", "ftp://sms.example.com", "http://", "http://a b", "http://a/ b", "http://a/%zz", "http://a:port", "http://[::1]/",
        "http://a/#x#y", "http://user@host/", "sms.example.com/send", "http://a/\u{7}",
    ])
    func anythingElseIsRefused(_ url: String) {
        #expect(!SMSHTTPProviderConfiguration.isPlainHTTPURL(url))
    }

    /// What the logs show of it: never its query, where providers put their keys.
    @Test func theURLForLogsHasNoQuery() {
        func redacted(_ url: String) -> String {
            SMSHTTPProviderConfiguration(url: url, bodyTemplate: "{}", secret: "0123456789abcdef").redactedURL
        }
        #expect(redacted("https://sms.example.com/send?apikey=S3CR3T&x=1") == "https://sms.example.com/send?…")
        #expect(redacted("https://sms.example.com/send#apikey=S3CR3T") == "https://sms.example.com/send?…")
        #expect(redacted("https://sms.example.com/send") == "https://sms.example.com/send")
    }

    @Test func theLimitIs2048Bytes() {
        let base = "http://a/"
        #expect(SMSHTTPProviderConfiguration.isPlainHTTPURL(base + String(repeating: "x", count: 2048 - base.utf8.count)))
        #expect(!SMSHTTPProviderConfiguration.isPlainHTTPURL(base + String(repeating: "x", count: 2049 - base.utf8.count)))
    }
}
