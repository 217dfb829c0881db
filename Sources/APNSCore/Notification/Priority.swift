/// The `apns-priority` header: 10 sends immediately, 5 is power-aware, 1 puts power first and never wakes the device.
public enum Priority: Int, Sendable, CaseIterable, Hashable {
    case powerFirst = 1
    case powerAware = 5
    case immediate = 10

    /// Parses a priority given as text ("10", "5" or "1").
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard let number = Int(text), let priority = Priority(rawValue: number) else {
            throw InputError(.priorityInvalid, "priority '\(text)' is not one of 10, 5, 1")
        }
        self = priority
    }

    /// Validates a priority given as a number.
    public init(validating number: Int) throws(InputError) {
        guard let priority = Priority(rawValue: number) else {
            throw InputError(.priorityInvalid, "priority \(number) is not one of 10, 5, 1")
        }
        self = priority
    }
}
