/// A file named by an option that could not be read or used: the option in front of the file's own error, so the
/// message says which option to fix (`--key: file not found: /keys/AuthKey.p8`). Exit status 1, as every file
/// named on the command line (`ExitStatus.failure`).
struct OptionFileError: Error, CustomStringConvertible {
    let option: String
    let underlying: any Error

    var description: String { "\(option): \(underlying)" }

    /// Runs `body` (which reads the file `option` names), its error wrapped.
    static func reading<T>(_ option: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw OptionFileError(option: option, underlying: error)
        }
    }
}
