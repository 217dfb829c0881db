import APNSCore
import APNSHTTP2
import Foundation

/// The mock's log of accepted notifications (`apns-bulk mock --log-accepted FILE`): one JSON line per request
/// answered 200, written with write(2) (no buffering) before the answer is handed to HTTP/2, so the file always
/// holds every notification whose acceptance a client could have seen. An audit compares it with a result file:
/// every `delivered` line must be in it, and no device token may be in it twice.
///
///     {"token":"<hex>","topic":"com.example.app","apns_id":"<uuid>","connection":1,"stream":3}
///
/// `topic` is the request's `apns-topic` header (empty when a certificate's only topic stood in for it).
public final class MockAcceptedLog: Sendable {
    public let path: String
    private let handle: FileHandle

    /// Creates (or empties) the file.
    public init(path: String) throws(MockServerError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw MockServerError(.configuration, "\(path): cannot create the accepted-notification log")
        }
        self.path = path
        self.handle = handle
    }

    deinit {
        try? handle.close()
    }

    /// The line for an accepted request: its token (from `:path`), `apns-topic` and answer's `apns-id`.
    static func line(for request: MockRequest, apnsID: APNSID, connection: Int) -> [UInt8] {
        let prefix = Array("/3/device/".utf8)
        let token = request.path.starts(with: prefix) ? request.path.dropFirst(prefix.count) : request.path[...]
        let topic = request.fields.firstValue(of: "apns-topic") ?? []
        var line = Array(#"{"token":""#.utf8)
        ResponseBodies.appendEscaped(String(decoding: token, as: UTF8.self), to: &line)
        line.append(contentsOf: #"","topic":""#.utf8)
        ResponseBodies.appendEscaped(String(decoding: topic, as: UTF8.self), to: &line)
        line.append(contentsOf: #"","apns_id":""#.utf8)
        line.append(contentsOf: apnsID.bytes)
        line.append(contentsOf: #"","connection":\#(connection),"stream":\#(request.streamID)}"#.utf8)
        line.append(UInt8(ascii: "\n"))
        return line
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
