/// Owns how a count and its noun are written in every message: `1 record`, `2 records`, `0 records`, the plural
/// given where adding an `s` is wrong (`1 entry`, `3 entries`). Counts are written in plain digits, as elsewhere
/// in the tool's messages, so scripts can read them.
public enum CountedNoun {
    /// `count` followed by `singular` when the count is one, else by `plural` (default: `singular` + "s").
    public static func text(_ count: some BinaryInteger, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + noun(count, singular, plural: plural)
    }

    /// The noun alone, chosen by `count`: for a count written elsewhere in the sentence.
    public static func noun(_ count: some BinaryInteger, _ singular: String, plural: String? = nil) -> String {
        count == 1 ? singular : (plural ?? singular + "s")
    }
}
