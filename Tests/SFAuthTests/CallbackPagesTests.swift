import Foundation
import Testing

@testable import SFAuth

@Suite("CallbackPages")
struct CallbackPagesTests {
    /// `Resources/pages`, found from this file's path.
    static let pagesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources/pages")

    static let regenerate = "run `sh Resources/embed.sh pages` to regenerate Sources/SFAuth/Loopback/CallbackPages.swift"

    @Test("the embedded constants equal Resources/pages/*.html")
    func embeddedPagesMatchFiles() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.pagesDirectory.path)
            .filter { $0.hasSuffix(".html") }.sorted()
        #expect(names.contains("signed-in.html") && names.contains("failed.html"))
        for name in names {
            let file = try String(contentsOf: Self.pagesDirectory.appendingPathComponent(name), encoding: .utf8)
            guard let embedded = CallbackPages.all[name] else {
                Issue.record("Resources/pages/\(name) is not embedded: \(Self.regenerate)")
                continue
            }
            #expect(embedded == file, "Resources/pages/\(name) differs from its embedded copy: \(Self.regenerate)")
        }
        for name in CallbackPages.all.keys where !names.contains(name) {
            Issue.record("CallbackPages embeds \(name), which no longer exists: \(Self.regenerate)")
        }
    }

    @Test("the pages are self-contained: inline CSS only, no scripts, nothing loaded from outside")
    func selfContained() {
        for (name, page) in CallbackPages.all {
            let lower = page.lowercased()
            for forbidden in ["<script", "src=", "href=", "http:", "https:", "@import", "url(", "<link", "<iframe", "<img"] {
                #expect(!lower.contains(forbidden), "\(name) contains \(forbidden)")
            }
            #expect(lower.hasPrefix("<!doctype html>"), "\(name)")
            #expect(lower.contains("<meta charset=\"utf-8\">"), "\(name)")
        }
    }

    @Test("placeholders are filled after HTML-escaping & < > \" '")
    func rendering() {
        #expect(LoopbackHTTP.htmlEscape("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&#39;f")
        #expect(LoopbackHTTP.htmlEscape("plain ü ✓") == "plain ü ✓")

        let signedIn = LoopbackHTTP.signedInPage(detail: "<script>alert('x')</script> & {{message}}")
        #expect(signedIn.contains("You are signed in"))
        #expect(signedIn.contains("close this tab and return to the terminal"))
        #expect(signedIn.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; {{message}}"))
        #expect(!signedIn.contains("<script>"))
        #expect(!signedIn.contains("{{detail}}"))

        let failed = LoopbackHTTP.failedPage(message: "invalid_grant: \"expired\" {{detail}}")
        #expect(failed.contains("Sign-in failed"))
        #expect(failed.contains("terminal"))
        #expect(failed.contains("invalid_grant: &quot;expired&quot; {{detail}}"))
        #expect(!failed.contains("{{message}}"))

        #expect(signedIn.contains("sfauth &middot; browser login") && !signedIn.contains("{{product}}"))
        // Another app's pages name it, and only it.
        let acme = AppIdentity(name: "acme", displayName: "Acme <CLI>")
        for page in [LoopbackHTTP.signedInPage(detail: "{{product}}", app: acme), LoopbackHTTP.failedPage(message: "{{product}}", app: acme)] {
            #expect(page.contains("Acme &lt;CLI&gt; &middot; browser login"))
            #expect(page.contains("{{product}}"))  // a server's words are shown, never filled in
            #expect(!page.contains("sfauth"))
        }
        #expect(LoopbackHTTP.signedInPath(for: acme) == "/acme/signed-in" && LoopbackHTTP.failedPath(for: acme) == "/acme/failed")

        let rejected = String(decoding: LoopbackHTTP.rejected(reason: "no <state>"), as: UTF8.self)
        #expect(rejected.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(rejected.contains("does not belong to the login in progress"))
        #expect(rejected.contains("no &lt;state&gt;"))
    }
}
