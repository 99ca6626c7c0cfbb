/// A size given on the command line: `1048576`, `512KiB`, `1MiB`, `1M`, `0` (binary multiples).
package enum ByteSize {
    /// The largest size accepted: 1 GiB, so a buffer never grows past what a laptop can spare.
    package static let maximum = 1 << 30

    /// Parses `text`.
    ///
    /// - Throws: `OAuthError.configuration` naming `option` for anything but a number with an
    ///   optional `K`/`KiB`, `M`/`MiB` or `G`/`GiB` suffix, or a size above 1 GiB.
    package static func parse(_ text: String, option: String) throws(OAuthError) -> Int {
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        let unit = text.dropFirst(digits.count).lowercased()
        let multiplier: Int? =
            switch unit {
            case "", "b": 1
            case "k", "kib": 1 << 10
            case "m", "mib": 1 << 20
            case "g", "gib": 1 << 30
            default: nil
            }
        guard !digits.isEmpty, digits.count <= 10, let multiplier, let value = Int(digits), value <= maximum / multiplier else {
            throw .configuration("\(option) \(TerminalText.escaped(text)) is not a size up to 1GiB, such as 1048576, 512KiB or 1MiB")
        }
        return value * multiplier
    }
}
