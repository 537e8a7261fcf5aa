/// The two-person rule, decided once: whether a push is sent now or waits for a second
/// person's approval.
///
/// - A caller that may compose but not send (an author, a key holding `compose` only)
///   never sends: every push it makes waits.
/// - A person's push to more devices than the app's threshold waits, whatever their role.
/// - Keys and the master secret holding `send` are machines an operator configured: the
///   rule is about people, and they send as before.
public enum ApprovalRule {
    public enum Decision: Sendable, Equatable {
        case send
        /// Kept until another person approves it.
        case awaitApproval
    }

    /// Whether the audience size is needed to decide (it costs a count).
    public static func needsAudienceSize(isPerson: Bool, threshold: Int64?) -> Bool {
        isPerson && threshold != nil
    }

    /// - Parameters:
    ///   - scopes: what the caller holds on the app.
    ///   - isPerson: the caller is a person's session.
    ///   - threshold: the app's threshold, nil when the rule is off.
    ///   - audienceSize: the devices the push targets (only read when a person's push
    ///     meets a threshold).
    public static func decide(scopes: Set<Scope>, isPerson: Bool, threshold: Int64?, audienceSize: Int64?) -> Decision {
        guard scopes.contains(.send) else { return .awaitApproval }
        if isPerson, let threshold, (audienceSize ?? .max) > threshold { return .awaitApproval }
        return .send
    }

    /// Whether `approver` may approve a push `composerUserID` composed: a person other than
    /// its composer, whose role approves.
    public static func mayApprove(approverUserID: Int64?, role: Role?, composerUserID: Int64?) -> Bool {
        guard let approverUserID, let role, role.approves else { return false }
        return approverUserID != composerUserID
    }
}
