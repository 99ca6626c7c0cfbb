// acme — sign in with your browser, then call the API as yourself.
//
//   acme login [--issuer URL] [--client-id ID]   sign in (ACME_ISSUER, ACME_CLIENT_ID by default)
//   acme whoami                                   who is signed in
//   acme get URL                                  GET URL with the access token (renewed when needed)
//   acme logout                                   sign out: revoke the tokens, forget the account
import Glibc
import SFAuth

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "login": try await Acme.login(options: Array(arguments.dropFirst()))
    case "whoami": try await Acme.whoami()
    case "get" where arguments.count == 2: try await Acme.get(arguments[1])
    case "logout": try await Acme.logout()
    default:
        AcmeUI.say("usage: acme login [--issuer URL] [--client-id ID] | acme whoami | acme get URL | acme logout")
        exit(2)
    }
} catch let error as OAuthError {
    AcmeUI.fail(error)
} catch {
    AcmeUI.say("acme: \(error)")
    exit(1)
}
