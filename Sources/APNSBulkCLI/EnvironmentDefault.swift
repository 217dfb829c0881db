import Foundation

/// Reads option values that may also come from environment variables (secrets and CI settings); an option given
/// on the command line always wins.
enum EnvironmentDefault {
    static func value(_ option: String?, _ variable: String) -> String? {
        if let option, !option.isEmpty { return option }
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        return value
    }
}
