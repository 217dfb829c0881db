/// The set of faults one mock run injects: at most one spec per fault name, in the grammar documented on `FaultSpec`.
public struct FaultPlan: Hashable, Sendable, CustomStringConvertible {
    /// The specs, in the order given.
    public let specs: [FaultSpec]

    /// No faults.
    public static let none = FaultPlan(uncheckedSpecs: [])

    /// A plan from parsed specs; rejects two specs with the same name.
    public init(_ specs: [FaultSpec]) throws(MockConfigurationError) {
        var seen: Set<String> = []
        for spec in specs where !seen.insert(spec.name).inserted {
            throw .faultSpec(spec.description, "'\(spec.name)' is given more than once")
        }
        self.specs = specs
    }

    /// Parses specs as given on the command line: each argument may hold several specs separated by commas
    /// (`--fault 429=0.05,500=every:100 --fault latency=2..20ms`). Empty arguments and empty items are ignored.
    public init(parsing arguments: [String]) throws(MockConfigurationError) {
        var specs: [FaultSpec] = []
        for argument in arguments {
            for item in argument.split(separator: ",") where !item.allSatisfy({ $0 == " " || $0 == "\t" }) {
                specs.append(try FaultSpec(parsing: item))
            }
        }
        try self.init(specs)
    }

    private init(uncheckedSpecs: [FaultSpec]) {
        specs = uncheckedSpecs
    }

    public var isEmpty: Bool { specs.isEmpty }

    public var description: String { specs.isEmpty ? "none" : specs.map(\.description).joined(separator: ",") }
}
