import HeraldCore
import Testing

/// The one rule for the addresses webhooks, callbacks and SMS providers may reach.
struct OutboundAddressRuleTests {
    let rule = OutboundAddressRule()

    @Test func internalAddressesInEveryFormAResolverReadsAreRefused() {
        let refused: [(String, String)] = [
            ("127.0.0.1", "loopback"), ("2130706433", "loopback"), ("0x7f000001", "loopback"), ("0177.0.0.1", "loopback"),
            ("127.1", "loopback"), ("0x7f.1", "loopback"), ("::1", "loopback"), ("[::1]", "loopback"),
            ("::ffff:127.0.0.1", "loopback"), ("::ffff:7f00:1", "loopback"), ("169.254.169.254", "link-local"),
            ("2852039166", "link-local"), ("fe80::1", "link-local"), ("[fe80::1%25eth0]", "link-local"), ("0.0.0.0", "unspecified"),
            ("0", "unspecified"), ("::", "unspecified"), ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
            ("192.168.0.1", "private"), ("100.64.0.1", "private"), ("fd00::1", "private"), ("fc00::", "private"),
            ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("255.255.255.255", "reserved"), ("64:ff9b::10.0.0.1", "private"),
            ("2002:a9fe:a9fe::1", "link-local"),
        ]
        for (host, kind) in refused {
            #expect(rule.refusal(host: host) == kind, "\(host)")
        }
    }

    @Test func publicAddressesAndNamesPass() {
        for host in ["203.0.113.7", "8.8.8.8", "172.32.0.1", "2001:db8::1", "2606:4700::1111", "example.com", "cafe", "1.2.3.4.example"] {
            #expect(rule.refusal(host: host) == nil, "\(host)")
        }
    }

    @Test func anAllowedRangeIsReachable() throws {
        let ranges = try OutboundAddressRule.ranges("127.0.0.0/8, ::1 10.1.0.0/16").get()
        let allowing = OutboundAddressRule(allowed: ranges)
        #expect(allowing.refusal(host: "127.0.0.1") == nil)
        #expect(allowing.refusal(host: "2130706433") == nil)
        #expect(allowing.refusal(host: "::ffff:127.0.0.1") == nil)
        #expect(allowing.refusal(host: "::1") == nil)
        #expect(allowing.refusal(host: "10.1.200.3") == nil)
        #expect(allowing.refusal(host: "10.2.0.1") == "private")
        #expect(allowing.refusal(host: "169.254.169.254") == "link-local")
        if case .failure(let invalid) = OutboundAddressRule.ranges("10.0.0.0/8,nope") {
            #expect(invalid.entry == "nope")
        } else {
            Issue.record("an entry that is not a range was taken")
        }
        #expect(IPRange("10.0.0.0/33") == nil)
    }

    @Test func theHostOfAURLIsWhatIsChecked() {
        #expect(rule.refusal(url: "http://169.254.169.254/latest") == "link-local")
        #expect(rule.refusal(url: "https://user@10.0.0.1:8443/x?y") == "private")
        #expect(rule.refusal(url: "http://[fe80::1]:80/") == "link-local")
        #expect(rule.refusal(url: "https://hooks.example.com/127.0.0.1") == nil)
        #expect(OutboundAddressRule.host(of: "http://[::1]:8080/a") == "::1")
    }
}
