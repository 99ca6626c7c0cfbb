import SFAuthCore

/// What a person is told to do in the device authorization grant, as plain text for a terminal.
package enum DeviceInstructions {
    /// The instructions: the page, the code, and the one-step address when the server gave one.
    /// What the server sent is shown with control and bidi characters escaped (`TerminalText`).
    package static func text(for authorization: DeviceAuthorization) -> String {
        var text = "To sign in, open \(TerminalText.escaped(authorization.verificationURI)) on any device and enter the code:\n\n"
        text += "    \(authorization.displayUserCode)\n\n"
        if let complete = authorization.verificationURIComplete {
            text += "Or open this address, which carries the code:\n\n    \(TerminalText.escaped(complete))\n\n"
        }
        let minutes = max(1, authorization.expiresIn / 60)
        text += "The code expires in \(minutes) minute\(minutes == 1 ? "" : "s").\n"
        return text
    }
}
