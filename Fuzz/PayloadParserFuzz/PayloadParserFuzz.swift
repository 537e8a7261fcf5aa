// libFuzzer harness for what HeraldKit parses from outside the app: a payload from the
// long connection (ParsedPayload) and an APNs notification's userInfo
// (HeraldEvent.fromAPNs, NotificationConfig.all). Built by scripts/fuzz-payload.sh, which
// compiles this file in one module with HeraldKit's parsing files (Foundation only, so
// there is no `import HeraldKit`).
import Foundation

/// What must hold for any bytes, besides not trapping.
private func checkConnectionPayload(_ bytes: [UInt8]) {
    let parsed = ParsedPayload(bytes)
    // Something shown or carried out names its message.
    if !parsed.events.isEmpty, parsed.messageID == nil { fatalError("events without a msg_id") }
    // Nothing carried out is always said why.
    if parsed.events.isEmpty, parsed.dropped == nil { fatalError("nothing and no reason") }
    if bytes.count > ParsedPayload.maxBytes, !parsed.events.isEmpty { fatalError("an oversized payload was parsed") }
}

/// The same bytes as an APNs `userInfo`, when they are a JSON object: never a trap, and a
/// notification read from it reads back the same from the `userInfo` the SDK would post
/// for it (a copy from the connection shown as a local notification).
private func checkAPNs(_ bytes: [UInt8]) {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let userInfo = object as? [String: Any] else { return }
    _ = NotificationConfig.all(userInfo: userInfo)
    _ = NotificationConfig.mediaURL(userInfo: userInfo)
    var reasons: [String] = []
    let events = HeraldEvent.fromAPNs(userInfo: userInfo) { reasons.append($0) }
    for case .notification(let notification) in events {
        let again = HeraldEvent.fromAPNs(userInfo: notification.userInfo)
        guard again == [.notification(notification)] else {
            fatalError("userInfo does not read back: \(notification) gave \(again)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    checkConnectionPayload(bytes)
    checkAPNs(bytes)
    return 0
}
