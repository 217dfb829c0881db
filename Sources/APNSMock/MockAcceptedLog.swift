import APNSCore
import APNSHTTP2
import Foundation
internal import Glibc

/// The mock's log of accepted notifications (`apns-bulk mock --log-accepted FILE`): one JSON line per request
/// accepted (answered 200), written with write(2) (no buffering), so the file holds every notification APNs would
/// have processed. An audit compares it with a result file: every `delivered` line must be in it, and no device
/// token may be in it twice.
///
///     {"token":"<hex>","topic":"com.example.app","apns_id":"<uuid>","expiration":1767225600,"connection":1,"stream":3,"answered":true}
///
/// `topic` is the request's `apns-topic` header (empty when a certificate's only topic stood in for it). In
/// development mode the line also carries the answer's `apns-unique-id`, as `"apns_unique_id"` after `apns_id`.
/// `expiration` is the request's `apns-expiration` header as received (digits: the validator answered 200), absent
/// when the request had none.
/// `answered` says whether the 200 was handed to HTTP/2: an answer sent at once is logged before it is handed over
/// (`true`, so the line is on disk before the client can see the answer); an answer held back by injected latency
/// is logged when it is handed over (`true`) or, when the connection ends first, then (`false`: the notification
/// was accepted, as APNs would have processed it, but the client never saw the answer: for it, in doubt).
public final class MockAcceptedLog: Sendable {
    /// The file the accepted notifications are logged to.
    public let path: String
    private let handle: FileHandle

    /// Creates (or empties) the file, in place: a device or a FIFO given as the path (/dev/null, a pipe an audit
    /// reads) stays what it is (`FileManager.createFile` would rename a new file over it).
    public init(path: String) throws(MockServerError) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw MockServerError(.configuration, "\(path): cannot create the accepted-notification log: \(reason)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        self.path = path
        self.handle = handle
    }

    deinit {
        try? handle.close()
    }

    /// The line for an accepted request: its token (from `:path`), `apns-topic` and answer's `apns-id`, marked
    /// answered (see `unanswered` for the other mark).
    static func line(for request: MockRequest, apnsID: APNSID, uniqueID: APNSID? = nil, connection: Int) -> [UInt8] {
        let prefix = Array("/3/device/".utf8)
        let token = request.path.starts(with: prefix) ? request.path.dropFirst(prefix.count) : request.path[...]
        let topic = request.fields.firstValue(of: "apns-topic") ?? []
        var line = Array(#"{"token":""#.utf8)
        ResponseBodies.appendEscaped(String(decoding: token, as: UTF8.self), to: &line)
        line.append(contentsOf: #"","topic":""#.utf8)
        ResponseBodies.appendEscaped(String(decoding: topic, as: UTF8.self), to: &line)
        line.append(contentsOf: #"","apns_id":""#.utf8)
        line.append(contentsOf: apnsID.bytes)
        if let uniqueID {
            line.append(contentsOf: #"","apns_unique_id":""#.utf8)
            line.append(contentsOf: uniqueID.bytes)
        }
        line.append(UInt8(ascii: "\""))
        if let header = request.fields.firstValue(of: "apns-expiration"),
            let expiration = try? Expiration(parsing: String(decoding: header, as: UTF8.self))
        {
            // as a JSON number: no leading 0
            line.append(contentsOf: #","expiration":\#(expiration.epochSeconds)"#.utf8)
        }
        line.append(contentsOf: #","connection":\#(connection),"stream":\#(request.streamID),"answered":true}"#.utf8)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    private static let answeredEnd = Array(#"true}"#.utf8) + [UInt8(ascii: "\n")]
    private static let unansweredEnd = Array(#"false}"#.utf8) + [UInt8(ascii: "\n")]

    /// A line from `line(for:…)`, marked `"answered":false`.
    static func unanswered(_ line: [UInt8]) -> [UInt8] {
        guard line.count >= answeredEnd.count, line.suffix(answeredEnd.count).elementsEqual(answeredEnd) else {
            return line
        }
        return line.dropLast(answeredEnd.count) + unansweredEnd
    }

    /// Appends one line; false when it could not be written (the caller must then not answer 200).
    func append(_ line: [UInt8]) -> Bool {
        do {
            try handle.write(contentsOf: line)
            return true
        } catch {
            return false
        }
    }
}
