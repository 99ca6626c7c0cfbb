/// "Did you mean …?": the name someone probably meant when they typed one that does not exist.
package enum Spelling {
    /// The one of `candidates` nearest to `typed` — equal ignoring case, or at most two edits apart
    /// (insertions, deletions, substitutions) for names of four characters or more; `nil` when none
    /// is near, or when two are equally near.
    package static func suggestion(for typed: String, among candidates: [String]) -> String? {
        let near = candidates.compactMap { candidate in nearness(of: candidate, to: typed).map { (candidate, $0) } }
        guard let best = near.map(\.1).min() else { return nil }
        let nearest = near.filter { $0.1 == best }
        return nearest.count == 1 ? nearest[0].0 : nil
    }

    /// Whether `candidate` is probably what was meant by `typed`, by the rule above.
    package static func isNear(_ candidate: String, _ typed: String) -> Bool {
        nearness(of: candidate, to: typed) != nil
    }

    /// The edit distance of `candidate` from `typed` ignoring case, when it is near enough to suggest.
    private static func nearness(of candidate: String, to typed: String) -> Int? {
        let edits = distance(candidate.lowercased(), typed.lowercased())
        return edits == 0 || (min(candidate.count, typed.count) >= 4 && edits <= 2) ? edits : nil
    }

    /// The Levenshtein distance between `a` and `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
