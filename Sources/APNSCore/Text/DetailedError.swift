/// An error told by the short, stable summary of its kind and the specifics a person needs to act on it (a path, a
/// value, a library's own text): described as `summary: detail`, or the summary alone. The one description every
/// error type of the project shares.
public protocol DetailedError: Error, CustomStringConvertible {
    /// The kind's short, stable text (`cannot open file`, `TokenOddLength`).
    var summary: String { get }
    /// The specifics, on one printable line; may be empty.
    var detail: String { get }
}

extension DetailedError {
    /// The summary, followed by the detail when there is one.
    public var description: String { detail.isEmpty ? summary : "\(summary): \(detail)" }
}

/// A kind of failure of one error type (`Owner`): a short, stable text that names it. Errors compare by kind
/// (`error.kind == .openFailed`); each error type declares its kinds as static members in an extension where
/// `Owner` is that type, so new kinds can be added without breaking a caller's `switch`.
public struct ErrorKind<Owner>: Hashable, Sendable, CustomStringConvertible {
    /// The error's text.
    public let description: String

    /// An error that shows `description`.
    public init(_ description: String) { self.description = description }
}

/// A `DetailedError` told by an `ErrorKind` of its own type: the summary is the kind's text, written here once
/// for every such error type (`PipelineError`, `TransportError`, `CryptoError`, `MockServerError`).
public protocol KindedError: DetailedError {
    /// The kind of failure; compare errors by it (`error.kind == .openFailed`).
    var kind: ErrorKind<Self> { get }
}

extension KindedError {
    /// The kind's short, stable text.
    public var summary: String { kind.description }
}
