import Foundation
import Testing

@testable import APNSBulkCLI

/// A misspelt command or option answered with the name meant, and the names argument-parser knows left alone.
@Suite("command-line spelling")
struct CommandLineSpellingTests {
    let spelling = CommandLineSpelling.apnsBulk

    @Test("a misspelt command names the one meant and lists the commands")
    func command() throws {
        let message = try #require(spelling.mistake(in: ["sned", "campaign.ndjson"]))
        #expect(message.hasPrefix("unknown command 'sned'; did you mean 'send'?"), "\(message)")
        #expect(message.contains("replay") && message.contains("validate"), "\(message)")
        #expect(spelling.mistake(in: ["valdiate", "c.ndjson"])?.contains("'validate'") == true)
    }

    @Test("a misspelt option of a command names the option meant and the command's help")
    func option() throws {
        let message = try #require(spelling.mistake(in: ["send", "c.ndjson", "--resluts", "out.ndjson"]))
        #expect(
            message
                == "unknown option '--resluts' for 'apns-bulk send'; did you mean '--results'? (see 'apns-bulk send --help')"
        )
        #expect(spelling.mistake(in: ["send", "c.ndjson", "--topc=com.example.app"])?.contains("'--topic'") == true)
        #expect(spelling.mistake(in: ["replay", "r.ndjson", "--reslts", "x"])?.contains("'apns-bulk replay'") == true)
    }

    @Test("known names, operands after --, far-off words and ties are left to argument-parser")
    func leftAlone() {
        #expect(
            spelling.mistake(in: ["send", "c.ndjson", "--results", "r.ndjson", "--topic", "com.example.app"]) == nil)
        #expect(spelling.mistake(in: ["send", "--", "--resluts"]) == nil)
        #expect(spelling.mistake(in: ["frobnicate"]) == nil)
        #expect(spelling.mistake(in: ["send", "c.ndjson", "--completely-different"]) == nil)
        #expect(spelling.mistake(in: ["help", "send"]) == nil)
        #expect(spelling.mistake(in: ["--version"]) == nil)
        #expect(spelling.mistake(in: []) == nil)
        #expect(CommandLineSpelling.nearest(to: "--ab", among: ["--ac", "--ad"]) == nil, "a tie names no one")
    }

    @Test("the distance counts a swap of neighbours as one edit")
    func distance() {
        #expect(CommandLineSpelling.editDistance(Array("sned".utf8), Array("send".utf8)) == 1)
        #expect(CommandLineSpelling.editDistance(Array("send".utf8), Array("send".utf8)) == 0)
        #expect(CommandLineSpelling.editDistance(Array("".utf8), Array("abc".utf8)) == 3)
        #expect(CommandLineSpelling.editDistance(Array("kitten".utf8), Array("sitting".utf8)) == 3)
    }

    @Test("every subcommand's option names come from its help screen")
    func optionNames() throws {
        let send = try #require(spelling.commands["send"])
        #expect(send.isSuperset(of: ["--results", "--topic", "--help", "--key", "--endpoint"]), "\(send.sorted())")
        #expect(!send.contains("--"), "no bare dashes")
    }

    @Test("a negative number is read as the option's value and refused by its range, not taken for an option")
    func negativeNumbers() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let key = root.appendingPathComponent("samples/keys/AuthKey_TEST123456.p8").path
        let base = [
            "send", "c.ndjson", "--results", "r.ndjson", "--topic", "com.example.app",
            "--key", key, "--key-id", "TEST123456", "--team-id", "TEAM123456",
        ]
        for (option, value, expected) in [
            ("--rate", "-5", "--rate must be positive"),
            ("--connections", "-1", "--connections must be 1 to 64"),
            ("--max-attempts", "-2", "--max-attempts must be 1 to 100"),
        ] {
            var message = ""
            do {
                _ = try APNSBulkCommand.parseAsRoot(base + [option, value])
            } catch {
                message = APNSBulkCommand.errorMessage(for: error)
            }
            #expect(message.hasPrefix("apns-bulk: error: " + expected), "\(option) \(value): \(message)")
            #expect(
                !message.contains("\n") && message.hasSuffix("; see 'apns-bulk send --help'"), "one line: \(message)")
        }
    }

    @Test("argument-parser's errors read in the tool's voice")
    func voice() {
        let message = APNSBulkCommand.errorMessage(for: CommandLineSpellingTestError())
        #expect(message.hasPrefix("apns-bulk: error: "), "\(message)")
        #expect(!message.contains("Error: "), "\(message)")
    }
}

private struct CommandLineSpellingTestError: Error, CustomStringConvertible {
    var description: String { "the campaign file is missing" }
}
