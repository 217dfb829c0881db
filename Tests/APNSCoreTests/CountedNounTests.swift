import APNSCore
import Testing

/// One record, two records: every count in a message agrees with its noun.
@Suite("counted nouns")
struct CountedNounTests {
    @Test("one takes the singular; zero and many the plural, regular or given")
    func plurals() {
        #expect(CountedNoun.text(1, "record") == "1 record")
        #expect(CountedNoun.text(0, "record") == "0 records")
        #expect(CountedNoun.text(2, "duplicate") == "2 duplicates")
        #expect(CountedNoun.text(1, "retry", plural: "retries") == "1 retry")
        #expect(CountedNoun.text(3, "retry", plural: "retries") == "3 retries")
        #expect(CountedNoun.noun(UInt64(1), "token") == "token")
        #expect(CountedNoun.noun(-1, "token") == "tokens")
    }
}
