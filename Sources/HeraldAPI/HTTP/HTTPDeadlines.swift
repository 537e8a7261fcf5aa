/// When an API connection has taken too long and is closed: a request must arrive whole
/// (head and body) within ``Configuration/requestTimeout`` of its first byte, a connection
/// with nothing to do is closed after ``Configuration/idleTimeout``, and one whose answer
/// said `Connection: close` gets ``Configuration/lingerTimeout`` to read it and go.
/// While a request is being answered, no deadline runs (its own waits are bounded).
/// A streamed upload (a device import, read and written as it arrives, for as long as a
/// file takes) has no deadline for the whole: it must only keep coming, and is closed
/// once ``Configuration/requestTimeout`` passes without a byte of it.
///
/// A value type: every event takes the time, and ``deadline`` says when the connection
/// is to be closed, so the handler keeps one timer.
struct HTTPDeadlines<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    struct Configuration: Sendable {
        var idleTimeout: Duration
        var requestTimeout: Duration
        var lingerTimeout: Duration
    }

    let configuration: Configuration
    /// The first byte of the request being received; nil between requests.
    private var receivingSince: Instant?
    /// A request's head was read and not yet its end.
    private var requestOpen = false
    /// The request being received is a streamed upload.
    private var streamedUpload = false
    /// Requests read and not yet answered to their end.
    private var responsesPending = 0
    private var idleSince: Instant
    private var closingSince: Instant?

    init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        self.idleSince = now
    }

    /// Bytes arrived from the client.
    mutating func bytesReceived(now: Instant) {
        if receivingSince == nil || streamedUpload { receivingSince = now }
    }

    /// A request's head was decoded; `streamedUpload` when its body is read as it comes
    /// for as long as it keeps coming.
    mutating func headReceived(now: Instant, streamedUpload: Bool = false) {
        if receivingSince == nil || streamedUpload { receivingSince = now }
        requestOpen = true
        self.streamedUpload = streamedUpload
        responsesPending += 1
    }

    /// A request's end was decoded: it is all here.
    mutating func endReceived() {
        receivingSince = nil
        requestOpen = false
        streamedUpload = false
    }

    /// A response was written to its end; `closing` when it said `Connection: close`.
    mutating func responseEnded(now: Instant, closing: Bool) {
        responsesPending = max(0, responsesPending - 1)
        if responsesPending == 0 { idleSince = now }
        if closing, closingSince == nil { closingSince = now }
    }

    /// When the connection is to be closed, if nothing else happens first.
    var deadline: Instant? {
        var deadline: Instant?
        if let receivingSince {
            deadline = receivingSince.advanced(by: configuration.requestTimeout)
        } else if responsesPending == 0 {
            deadline = idleSince.advanced(by: configuration.idleTimeout)
        }
        if let closingSince {
            let linger = closingSince.advanced(by: configuration.lingerTimeout)
            deadline = deadline.map { min($0, linger) } ?? linger
        }
        return deadline
    }

    enum Action: Equatable {
        case close
        case wait(until: Instant)
        case none
    }

    /// The timer went off at `now`.
    func timerFired(now: Instant) -> Action {
        guard let deadline else { return .none }
        return now >= deadline ? .close : .wait(until: deadline)
    }
}
