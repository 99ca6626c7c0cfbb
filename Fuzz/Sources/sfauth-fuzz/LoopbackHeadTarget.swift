import SFAuth

/// The loopback listener's reading of a request head (`SFAuth/Loopback/LoopbackHTTP.swift`): what
/// a browser, or anything else on this machine, sends to the callback port. The input is the bytes
/// received, in one read or two (the first byte chooses where the second read starts).
///
/// Thin on purpose: it calls the parse functions of `LoopbackHTTP` as they are (`endOfHead`,
/// `parseRequestLine`, `hostField`, `isOwnHost`); when that file grows another, add a line here.
@Sendable func fuzzLoopbackHead(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    // Searching from the start and resuming after a partial read must agree.
    let whole = LoopbackHTTP.endOfHead(in: bytes, searchFrom: 0)
    if let first = bytes.first, bytes.count > 1 {
        let split = Int(first) % bytes.count
        let resumed = LoopbackHTTP.endOfHead(in: bytes, searchFrom: max(0, split - 3))
        if let whole, whole > split {
            precondition(resumed == whole, "endOfHead: resuming at \(split) gave \(String(describing: resumed)), not \(whole)")
        }
    }
    let head = whole.map { bytes[..<$0] } ?? bytes[...]
    guard head.count <= LoopbackHTTP.maximumHeadSize * 2 else { return }
    _ = LoopbackHTTP.parseRequestLine(head)
    _ = LoopbackHTTP.parseRequestLine(bytes[...])
    // A request line that does not start the buffer (a slice not at index 0).
    if bytes.count > 2 { _ = LoopbackHTTP.parseRequestLine(bytes[1...]) }
    // The `Host` field of the header lines after the request line, and whether it names the listener.
    let fields = head[(head.firstIndex(of: 13) ?? head.startIndex)...]
    let host = LoopbackHTTP.hostField(in: fields)
    for port: UInt16 in [1717, 8080, 0, 65535] { _ = LoopbackHTTP.isOwnHost(host, port: port) }
}
