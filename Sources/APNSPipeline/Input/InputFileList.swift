/// The input paths of a run by file index: what a `RecordKey`'s file index means. The result writer turns an
/// index into the `file` field with it, and the result reader turns a `file` field back into an index (a path
/// not yet listed is added at the end).
public struct InputFileList: Sendable, Equatable {
    /// The paths, by file index, as given on the command line (or as result lines name them).
    public private(set) var paths: [String]
    private var indexByPath: [String: Int] = [:]

    /// A list of the given paths, in order.
    public init(_ paths: [String] = []) {
        self.paths = []
        for path in paths { append(path) }
    }

    /// The path of a file index, as a result line's `file` field writes it (`#index` for an index not listed).
    public func path(at index: Int) -> String {
        paths.indices.contains(index) ? paths[index] : "#\(index)"
    }

    /// The index of a path already listed (its first position when given twice).
    public func index(of path: String) -> Int? { indexByPath[path] }

    /// The index of a path, adding it at the end when it is not listed yet.
    public mutating func index(adding path: String) -> Int {
        if let index = indexByPath[path] { return index }
        return append(path)
    }

    @discardableResult
    private mutating func append(_ path: String) -> Int {
        paths.append(path)
        if indexByPath[path] == nil { indexByPath[path] = paths.count - 1 }
        return paths.count - 1
    }

    /// Whether both lists name the same paths in the same order.
    public static func == (lhs: InputFileList, rhs: InputFileList) -> Bool { lhs.paths == rhs.paths }
}
