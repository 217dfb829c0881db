import APNSCore
import APNSPipeline
import ArgumentParser

/// What the shells offer for each argument's value (`apns-bulk --generate-completion-script bash|zsh|fish`, which
/// `scripts/install.sh` installs). Files the tool reads complete by their extensions (and directories, to reach
/// them); files it writes complete to any name. Options with a fixed set of values offer that set, taken from the
/// code's own lists, so a completion cannot offer what the option refuses, nor miss what it accepts.
enum ValueCompletion {
    /// Campaign files (`send`, `validate`): NDJSON or CSV, optionally gzipped (`CampaignInput` picks the format by
    /// the name's ending).
    static let campaignFiles = CompletionKind.file(extensions: [
        "ndjson", "csv", "tsv", "ndjson.gz", "csv.gz", "tsv.gz",
    ])

    /// Result files of earlier runs (`replay`, `prune`, `report`): one extension per `ResultFormat`.
    static let resultFiles = CompletionKind.file(extensions: ResultFormat.allCases.map(\.rawValue))

    /// A provider signing key as Apple hands it out (AuthKey_KEYID.p8).
    static let p8Key = CompletionKind.file(extensions: ["p8"])

    /// PEM certificates or chains (client or server certificates, CAs, pins): .pem, or .crt as CAs often ship them.
    static let pemCertificates = CompletionKind.file(extensions: ["pem", "crt"])

    /// A PEM private key: .pem, or .key as OpenSSL users often name them.
    static let pemPrivateKey = CompletionKind.file(extensions: ["pem", "key"])

    /// A PEM public key.
    static let pemPublicKey = CompletionKind.file(extensions: ["pem"])

    /// A PKCS#12 bundle, as Keychain Access (.p12) or Windows (.pfx) exports it.
    static let pkcs12 = CompletionKind.file(extensions: ["p12", "pfx"])

    /// A JSON file: a payload template, or a run's summary (`send --summary` writes it, `report --summary` reads it).
    static let json = CompletionKind.file(extensions: ["json"])

    /// A Prometheus text file: node_exporter's textfile collector reads only `*.prom`.
    static let prometheusText = CompletionKind.file(extensions: ["prom"])

    /// Any file: files the tool writes, and inputs without a conventional extension (the mock's token registry).
    static let anyFile = CompletionKind.file()

    /// `--push-type`: every `PushType`.
    static let pushTypes = CompletionKind.list(PushType.allCases.map(\.rawValue))

    /// `--priority`: every `Priority`.
    static let priorities = CompletionKind.list(Priority.allCases.map { String($0.rawValue) })

    /// `--results-format`: every `ResultFormat`.
    static let resultFormats = CompletionKind.list(ResultFormat.allCases.map(\.rawValue))

    /// `--input-format`: every `CampaignInput.Format`.
    static let inputFormats = CompletionKind.list(CampaignInput.Format.allCases.map(\.rawValue))

    /// `--progress`: the modes `OutputOptions` accepts.
    static let progressModes = CompletionKind.list(OutputOptions.progressModes)

    /// `--endpoint`: the two named endpoints (an `https://host:port` URL is accepted too, but cannot be offered).
    static let endpoints = CompletionKind.list(ConnectionOptions.endpointNames)

    /// `prune --format`: every `PruneList.OutputFormat`.
    static let pruneFormats = CompletionKind.list(PruneList.OutputFormat.allCases.map(\.rawValue))
}
