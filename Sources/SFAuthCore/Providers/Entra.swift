import FoundationEssentials

/// Microsoft Entra ID (formerly Azure AD), v2.0 endpoints: an issuer per tenant under an authority
/// (`https://login.microsoftonline.com`, or a sovereign cloud's).
///
/// What sets it apart, each handled where it matters (learn.microsoft.com, "Microsoft identity
/// platform and OAuth 2.0 authorization code flow", "Redirect URI (reply URL) restrictions";
/// coreos/go-oidc#212, int128/kubelogin#858):
/// - the multi-tenant paths `common` and `organizations` publish the issuer as a template,
///   `https://login.microsoftonline.com/{tenantid}/v2.0`, and `consumers` publishes the personal
///   accounts' tenant; each ID token's `iss` names its own tenant (`tid`) — see
///   `DiscoveryDocument.decode` and `IDTokenCheck`;
/// - the metadata does not list `code_challenge_methods_supported` (PKCE is sent regardless);
/// - a refresh token only with `offline_access`; one resource per token;
/// - desktop apps register `http://localhost` and get any port; `127.0.0.1` is not accepted then;
/// - errors name an `AADSTS` number (`EntraRefusal`).
public enum Entra {
    /// The public cloud's authority.
    public static let defaultAuthority = "https://login.microsoftonline.com"
    /// The tenant signed in to when none is named: work and school accounts of any organization.
    public static let defaultTenant = "organizations"
    /// The tenant of personal Microsoft accounts, which `consumers` stands for.
    public static let personalAccountsTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    /// The placeholder of the multi-tenant issuer template.
    public static let tenantPlaceholder = "{tenantid}"

    /// The issuer to read metadata from: `<authority>/<tenant>/v2.0`.
    ///
    /// - Parameters:
    ///   - tenant: `common`, `organizations`, `consumers`, a tenant id (GUID) or a verified domain.
    ///   - authority: the cloud's sign-in host. Default: `defaultAuthority`.
    /// - Throws: `OAuthError.configuration` for a tenant that is not one path segment, or an
    ///   authority that is not an https URL of a host.
    public static func issuer(tenant: String = defaultTenant, authority: String = defaultAuthority) throws(OAuthError) -> String {
        let authority = try ProviderHost.origin(
            authority, name: "Entra authority", examples: "login.microsoftonline.com, login.microsoftonline.us"
        ).url
        guard !tenant.isEmpty, tenant != tenantPlaceholder,
            tenant.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." })
        else {
            throw .configuration(
                "the Entra tenant '\(TerminalText.escaped(tenant))' is not a tenant: give organizations, common, consumers, your tenant id or its domain"
            )
        }
        return authority + "/" + tenant + "/v2.0"
    }

    /// Whether `advertised`, the `issuer` in the metadata fetched for `requested`, is the one Entra
    /// documents for that path: the `{tenantid}` template for `…/common/v2.0` and
    /// `…/organizations/v2.0`, the personal accounts' tenant for `…/consumers/v2.0`. The origin and
    /// every other part must be the same — a server still speaks only for itself.
    package static func isDocumentedIssuer(_ advertised: String, for requested: String) -> Bool {
        for (tenant, published) in [("common", tenantPlaceholder), ("organizations", tenantPlaceholder), ("consumers", personalAccountsTenant)] {
            let segment = "/" + tenant + "/v2.0"
            if requested.hasSuffix(segment), advertised == requested.dropLast(segment.count) + "/" + published + "/v2.0" { return true }
        }
        return false
    }

    /// The issuer an ID token must name when the server's issuer is the `{tenantid}` template: the
    /// template with the token's own `tid`; `nil` when `tid` is not a tenant id (a GUID).
    package static func issuer(fromTemplate template: String, tenantId: String?) -> String? {
        guard let tenantId, tenantId.count == 36, tenantId.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        return template.replacing(tenantPlaceholder, with: tenantId.lowercased())
    }
}
