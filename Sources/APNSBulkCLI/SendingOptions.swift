import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser

/// The options `send` and `replay` both take after their own: how to authenticate, where and how to connect, how
/// to deliver; and what both do with them: build the client and the run's shared options, then run the campaign.
struct SendingOptions: ParsableArguments {
    @OptionGroup var authentication: AuthenticationOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var delivery: DeliveryOptions

    /// Runs a campaign of `inputs` read with `reader`, written as `output` says; `identity` names the campaign for
    /// its campaign record (called once the client configuration is known to be usable), and `topic` is the one the
    /// stop hint names. `reading` names the files the run reads besides its key, certificate and CA files, which no
    /// output may be either; the outputs are checked first, before anything is created or sent.
    func runCampaign(
        inputs: [CampaignInput], reading: [String], reader: CampaignReaderOptions, output: OutputOptions, resume: Bool,
        topic: String?, identity: () throws -> CampaignIdentity, body: CampaignRunner.Body
    ) throws {
        let credentials =
            [
                authentication.providerKey.keyFile, authentication.certificateFile, authentication.certificateKeyFile,
                connection.caFile,
            ].compactMap { $0 } + (try authentication.keySet()?.keys.map(\.file) ?? [])
        try CampaignRunner.reportingStartFailure { () throws(PipelineError) in
            try output.checkFiles(reading: reading + credentials)
        }
        var clients = try connection.runClients(authentication: authentication)
        if let routes = clients.routes, let topic, let named = try? Topic(validating: topic),
            let error = routes.uncovered(named)
        {
            // Every record without a topic of its own would end input_error: refuse the campaign instead.
            throw ValidationError("--topic \(topic): \(error.detail)")
        }
        let client = clients.primary
        var options = SendRunOptions(
            inputs: inputs, reader: reader, resultsPath: output.results, resultsFormat: output.format)
        options.resume = resume
        options.overwrite = output.overwrite
        options.identity = try identity()
        options.arguments = Array(CommandLine.arguments.dropFirst())
        options.durable = output.durable
        options.dispatch = delivery.configuration
        options.notAfter = try delivery.deadline()
        options.topicRoutes = clients.routes
        for index in clients.configurations.indices {
            clients.configurations[index].stopAfterTokensExpiredOnFirstUse =
                options.dispatch.stopAfterConsecutiveFailures
        }
        let environment: StopHint.Environment? =
            client.endpoint == .production
            ? .production
            : client.endpoint == .development ? .development : nil
        options.environment = environment?.rawValue ?? client.endpoint.host
        let hint = StopHint(
            keyID: authentication.providerKey.keyID, teamID: authentication.providerKey.teamID, topic: topic,
            endpoint: client.endpoint.description, environment: environment, arguments: options.arguments)
        try CampaignRunner.run(options, clients: clients, output: output, hint: hint, body: body)
    }
}
