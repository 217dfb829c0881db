import APNSCore
import APNSCrypto
import APNSHTTP2

extension APNSClientPool {
    /// Re-signs the provider token when the cache says it is time, and rebuilds the shared header blocks then.
    func refreshHeaders() throws {
        var jwt: String?
        if let tokenCache {
            // The serial names a signing: comparing it, not the whole token, keeps this per-request check cheap.
            if try tokenCache.currentSerial() == token?.serial, baseBlock != nil { return }
            let current = try tokenCache.currentToken()
            token = current
            jwt = current.jwt
        } else if baseBlock != nil {
            return
        }
        baseBlock = try HTTP2HeaderBlock.apnsRequests(endpoint: configuration.endpoint, providerToken: jwt)
        if let campaignTopic, let campaignPushType {
            campaignBlock = try HTTP2HeaderBlock.apnsRequests(
                endpoint: configuration.endpoint, providerToken: jwt, topic: campaignTopic, pushType: campaignPushType)
        }
    }

    /// Takes the first notification's topic and push type as the campaign's, so their header fields are laid out
    /// once and shared by every request that matches.
    func adoptCampaign(_ notification: PushNotification) {
        guard let block = try? HTTP2HeaderBlock.apnsRequests(
            endpoint: configuration.endpoint, providerToken: token?.jwt, topic: notification.topic,
            pushType: notification.pushType)
        else { return }
        campaignTopic = notification.topic
        campaignPushType = notification.pushType
        campaignBlock = block
    }

    /// Acts on what an answer says about the provider token the request carried: an `ExpiredProviderToken` for
    /// the token in use re-signs it at once (once per token); any other answer shows the token was accepted. Gives
    /// up when fresh tokens keep being declared expired on first use (the clock is wrong).
    func noteTokenAnswer(_ reason: APNSReason?, tokenSerial: Int) {
        guard let tokenCache, tokenSerial > 0 else { return }
        guard reason == .expiredProviderToken else {
            tokenCache.accepted(serial: tokenSerial)
            return
        }
        do {
            if case .refreshed = try tokenCache.invalidate(serial: tokenSerial) { try refreshHeaders() }
        } catch {
            reportFailure(error)
        }
        if let problem = tokenCache.clockProblem(limit: configuration.stopAfterTokensExpiredOnFirstUse) {
            reportFailure(TransportError(.providerTokenRejected, problem))
        }
    }
}
