import NIOCore
import NIOHPACK

/// A request waiting to be written on a connection.
public struct HTTP2Request: Sendable {
    public var headers: HPACKHeaders
    public var body: ByteBuffer
    public var deadline: NIODeadline
    public var promise: EventLoopPromise<HTTP2Response>

    public init(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<HTTP2Response>) {
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.promise = promise
    }
}

/// The answer to one request: its status, its header block (`:status` included) and body.
public struct HTTP2Response: Sendable {
    public var status: Int
    public var headers: HPACKHeaders
    public var body: ByteBuffer?
}

/// Why a request got no answer.
public enum HTTP2RequestError: Error, Sendable, Hashable {
    /// The stream was reset or left unanswered (GOAWAY above it, the connection lost, a
    /// write refused): it may be retried on another connection.
    case connectionClosed
    /// No answer by the request's deadline (the stream was cancelled).
    case deadlineExceeded
}
