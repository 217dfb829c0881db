import Foundation

/// Reads key and certificate files whole, telling "no such file" from "cannot read it" and naming the path.
enum FileBytes {
    /// Key and certificate files are small; anything larger is not one of them.
    static let maximumSize = 16 << 20

    static func read(_ path: String) throws(CryptoError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CryptoError.fileNotFound.with(context: path)
        }
        guard !isDirectory.boolValue else { throw CryptoError.fileUnreadable.with(context: "\(path): is a directory") }
        guard FileManager.default.isReadableFile(atPath: path), let data = FileManager.default.contents(atPath: path)
        else {
            throw CryptoError.fileUnreadable.with(context: "\(path): permission denied or read error")
        }
        guard data.count <= maximumSize else {
            throw CryptoError.fileUnreadable.with(context: "\(path): larger than \(maximumSize >> 20) MiB")
        }
        return [UInt8](data)
    }

    /// What `decode` makes of the file at `path`; a failure of either names the path (`CryptoError.inFile`).
    static func decode<Value>(
        _ path: String, _ decode: ([UInt8]) throws(CryptoError) -> Value
    ) throws(CryptoError) -> Value {
        let bytes = try read(path)
        do {
            return try decode(bytes)
        } catch {
            throw error.inFile(path)
        }
    }
}
