import HeraldCore

extension OutboundAddressRule {
    /// Refuses, as an invalid `field`, a URL whose host is a literal address outside the
    /// rule (`http://169.254.169.254/`, `http://2130706433/`, `http://[fe80::1]/`). A name is
    /// checked by the center, on each of its addresses, when a request is made.
    func check(url: String, field: String) throws(HeraldError) {
        guard let refusal = refusal(url: url) else { return }
        throw HeraldError.invalidField(
            field,
            "names an address Herald doesn't send requests to (\(refusal)) unless the administrator allows it (outbound.allowRanges)"
        )
    }
}
