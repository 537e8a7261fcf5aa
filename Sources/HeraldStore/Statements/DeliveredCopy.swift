/// What counts as a copy that reached its device or its push service: acknowledged over
/// the connection, or taken by APNs or FCM. The recall's targets, the SMS fallback's skip
/// and the opened report share it (migration 0040's `herald_record_deliveries` writes the
/// same set for its `opened` row). A new channel's delivered state goes here.
enum DeliveredCopy {
    /// The states of such a copy (`deliveries.state`), as an SQL list.
    static let states = "('tcp', 'apns', 'fcm')"
    /// The events that say a copy got there, as an SQL list.
    static let events = "('acknowledged', 'sent_apns', 'sent_fcm')"
}
