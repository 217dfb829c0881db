/// The two 10-character identifiers of token-based trust: the key id (`kid`, from the `.p8` file's name, for
/// example `AuthKey_ABC123DEFG.p8`) and the team id (`iss`, from the developer account's membership page).
/// Both are exactly 10 ASCII letters or digits.
public enum ProviderIdentifier {
    /// The length of a key id and of a team id.
    public static let length = 10

    /// Returns `keyID` unchanged, or throws `invalidKeyID` saying what is wrong with it.
    @discardableResult
    public static func validateKeyID(_ keyID: String) throws(CryptoError) -> String {
        if let problem = problem(with: keyID) {
            throw CryptoError.invalidKeyID.with(
                context: "\(quoted(keyID)) \(problem); a key id is 10 letters or digits")
        }
        return keyID
    }

    /// Returns `teamID` unchanged, or throws `invalidTeamID` saying what is wrong with it.
    @discardableResult
    public static func validateTeamID(_ teamID: String) throws(CryptoError) -> String {
        if let problem = problem(with: teamID) {
            throw CryptoError.invalidTeamID.with(
                context: "\(quoted(teamID)) \(problem); a team id is 10 letters or digits")
        }
        return teamID
    }

    /// Whether `value` is exactly 10 ASCII letters or digits.
    public static func isValid(_ value: String) -> Bool {
        problem(with: value) == nil
    }

    private static func problem(with value: String) -> String? {
        guard value.count == length else { return "has \(value.count) character\(value.count == 1 ? "" : "s")" }
        guard value.utf8.count == length, value.utf8.allSatisfy(isASCIIAlphanumeric) else {
            return "has a character that is not an ASCII letter or digit"
        }
        return nil
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default:
            false
        }
    }

    /// The value in quotes, shortened and with control characters escaped, for an error message.
    private static func quoted(_ value: String) -> String {
        let shown = value.count > 40 ? String(value.prefix(40)) + "..." : value
        return "\"\(shown.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())\""
    }
}
