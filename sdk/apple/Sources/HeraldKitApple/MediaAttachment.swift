#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import Logging
import UserNotifications

#if canImport(FoundationNetworking)
// Only for the Linux type-check: Apple's Foundation has URLSession itself.
import FoundationNetworking
#endif

/// A notification's image, GIF, audio or video, downloaded and attached.
enum MediaAttachment {
    /// The longest a download may take: the service extension has about 30 seconds in all.
    static let timeout: TimeInterval = 20

    /// The media at `url` as an attachment; nil when it can't be had (the notification
    /// shows without it).
    static func make(from url: URL, logger: Logger) async -> UNNotificationAttachment? {
        do {
            let (download, response) = try await URLSession.shared.download(for: URLRequest(url: url, timeoutInterval: timeout))
            if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
                throw HTTPStatus(code: http.statusCode)
            }
            // iOS recognizes an attachment's type by its file's extension.
            guard let fileExtension = fileExtension(of: url, mimeType: response.mimeType) else {
                logger.warning("media of an unknown type", metadata: ["url": "\(url)"])
                return nil
            }
            let file = FileManager.default.temporaryDirectory
                .appendingPathComponent(UUID().uuidString)
                .appendingPathExtension(fileExtension)
            try FileManager.default.moveItem(at: download, to: file)
            return try UNNotificationAttachment(identifier: "herald-media", url: file, options: nil)
        } catch {
            logger.warning("cannot attach the media", metadata: ["url": "\(url)", "error": "\(error)"])
            return nil
        }
    }

    /// The URL's own extension, or the one of its MIME type.
    static func fileExtension(of url: URL, mimeType: String?) -> String? {
        if !url.pathExtension.isEmpty { return url.pathExtension.lowercased() }
        return mimeType.flatMap { extensions[$0.lowercased()] }
    }

    static let extensions = [
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/heic": "heic",
        "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/wav": "wav", "audio/x-wav": "wav",
        "audio/aiff": "aiff", "video/mp4": "mp4", "video/quicktime": "mov", "video/mpeg": "mpg",
    ]

    struct HTTPStatus: Error {
        var code: Int
    }
}
#endif
