import APNSCore

/// The `--keep` fields of a campaign: the names of the record fields (NDJSON top-level members, CSV columns) whose
/// values every result line and prune row of the record carries, so they can be joined back to the user's rows
/// (docs/FILES.md, "Kept fields").
///
/// A name is 1 to 64 bytes of ASCII letters, digits, `_`, `-` and `.`, given once, and names none of the result
/// file's or the prune list's own columns (`token`, `topic`, `file`, `timestamp`, …) nor `kept`: in a CSV the
/// kept columns stand beside those, and a name of both would be ambiguous.
public struct KeptFields: Sendable, Hashable {
    /// The fields, in the order given.
    public let names: [String]

    /// The longest name accepted, in bytes.
    public static let maximumNameBytes = 64

    /// Names that are the result file's or the prune list's own columns, or the NDJSON result line's `kept` member.
    public static let reservedNames: Set<String> = Set(ResultRecord.fieldNames)
        .union(PruneList.csvHeader.split(separator: ",").map(String.init))
        .union(["kept"])

    /// Why an option value cannot be kept fields, naming the field (the CLI makes it a usage error).
    public struct Problem: Error, Sendable, CustomStringConvertible {
        /// The problem as one printable line.
        public let description: String
    }

    /// Parses the option's value, `FIELD[,FIELD…]`; a bad one is a `Problem` naming the field.
    public init(parsing text: String) throws(Problem) {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var seen: Set<String> = []
        for name in names {
            if let problem = Self.problem(with: name) {
                throw Problem(description: "--keep: \(problem)")
            }
            guard seen.insert(name).inserted else {
                throw Problem(description: "--keep: the field '\(name)' is named twice")
            }
        }
        self.names = names
    }

    /// Fields already checked (read back from a campaign record or a result line): the names `isAllowed` passes.
    public init(checkedNames names: [String]) {
        var seen: Set<String> = []
        self.names = names.filter { Self.problem(with: $0) == nil && seen.insert($0).inserted }
    }

    /// Why `name` cannot be a kept field, or nil when it can.
    public static func problem(with name: String) -> String? {
        guard !name.isEmpty else { return "a field name is empty (write --keep user_id,device_id)" }
        guard name.utf8.count <= maximumNameBytes else {
            return
                "the field name '\(PrintableText.escaping(name.prefix(maximumNameBytes)))…' is longer than \(maximumNameBytes) bytes"
        }
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        guard allowed else {
            return
                "the field name '\(PrintableText.escaping(name))' may hold only ASCII letters, digits, '_', '-' and '.'"
        }
        guard !reservedNames.contains(name) else {
            return "'\(name)' is a column of the result file or the prune list itself; keep another field"
        }
        return nil
    }

    /// The option's value as given: the names joined by commas (the campaign identity's `--keep`).
    public var optionValue: String { names.joined(separator: ",") }

    /// The kept values of one NDJSON record, the line `bytes[range]`: each named top-level member's value (the
    /// first when a name is given twice), as `KeptValues.text(ofJSON:in:)` makes it; an empty value for a member
    /// the record does not have, or when the line is not a JSON object (the record is then an input error).
    public func values(ofJSONLine bytes: [UInt8], range: Range<Int>) -> KeptValues {
        var values = [String?](repeating: nil, count: names.count)
        let scanner = JSONScanner(bytes)
        if let object = try? scanner.scanDocument(in: range), object.kind == .object {
            scanner.forEachMember(of: object) { key, value in
                let name = scanner.decodeString(key)
                guard let index = names.firstIndex(of: name), values[index] == nil else { return }
                values[index] = KeptValues.text(ofJSON: value, in: scanner)
            }
        }
        return KeptValues(names: names, values: values.map { $0 ?? "" })
    }

    /// The kept values of one CSV record, from its cells by column (`columns[i]` is the column of `names[i]`);
    /// an empty value for a column the record is too short to have. A cell that is not UTF-8 is decoded with
    /// U+FFFD (the record is then an input error).
    func values(ofCSV reader: CSVReader, record: CSVReader.Record, columns: [Int]) -> KeptValues {
        let values = columns.map { column in
            column < record.fieldCount ? String(decoding: reader.fieldBytes[reader.field(column)], as: UTF8.self) : ""
        }
        return KeptValues(names: names, values: values)
    }

    /// The column of each name in a CSV header (exact first, then case-insensitive, as template variables are
    /// found); a name that is none is a `PipelineError` naming it, before anything is sent.
    func columns(inHeader header: [String]) throws(PipelineError) -> [Int] {
        let lowered = header.map { $0.lowercased() }
        var columns: [Int] = []
        for name in names {
            guard let column = header.firstIndex(of: name) ?? lowered.firstIndex(of: name.lowercased()) else {
                throw PipelineError(
                    .csvHeaderInvalid,
                    "--keep names '\(name)', which is not a column of the header (columns: \(header.map { PrintableText.escaping($0) }.joined(separator: ", ")))"
                )
            }
            columns.append(column)
        }
        return columns
    }
}

// MARK: - KeptValues

/// The values of one record's kept fields, by name, as read from its input record (or from the result line a
/// replay sends again); one value for each name, empty when the record had none.
public struct KeptValues: Sendable, Hashable {
    /// The names of the fields kept.
    public var names: [String]
    /// The values of the fields kept, in the order of `names`.
    public var values: [String]

    /// Kept values from names and values of the same length.
    public init(names: [String], values: [String]) {
        self.names = names
        self.values = values
    }

    /// The value of `name`, nil when it is not kept here.
    public func value(named name: String) -> String? {
        guard let index = names.firstIndex(of: name), index < values.count else { return nil }
        return values[index]
    }

    /// A JSON value as a kept field's text: a string's decoded text (an escaped lone surrogate as U+FFFD), a
    /// number as written, `true`, `false`, empty for `null`, and an object or array as its JSON text as written.
    static func text(ofJSON value: JSONScanner.Value, in scanner: JSONScanner) -> String {
        switch value.kind {
        case .string: return scanner.decodeString(value)
        case .null: return ""
        case .true: return "true"
        case .false: return "false"
        case .number, .object, .array: return String(decoding: scanner.bytes[value.range], as: UTF8.self)
        }
    }

    /// Appends `,"kept":{"name":"value",…}` to an NDJSON line (names and values escaped by
    /// `JSONText.appendStringContents`).
    func appendNDJSONMember(to out: inout [UInt8]) {
        out.append(contentsOf: #","kept":{"#.utf8)
        for (index, name) in names.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.appendString(index < values.count ? values[index] : "", to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Reads the `kept` member of a result line: an object of strings (any other value taken as
    /// `text(ofJSON:in:)` makes it); names that cannot be kept fields are dropped. Nil when it is not an object.
    static func read(member value: JSONScanner.Value, in scanner: JSONScanner) -> KeptValues? {
        guard value.kind == .object else { return nil }
        var names: [String] = []
        var values: [String] = []
        scanner.forEachMember(of: value) { key, member in
            let name = scanner.decodeString(key)
            guard KeptFields.problem(with: name) == nil, !names.contains(name) else { return }
            names.append(name)
            values.append(text(ofJSON: member, in: scanner))
        }
        return KeptValues(names: names, values: values)
    }
}
