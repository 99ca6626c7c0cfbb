import SFAuthCore

/// Sends HTTP requests. The coordinator talks to the token endpoint only through this seam, so tests
/// and embedding programs can supply their own transport.
public protocol HTTPClient: Sendable {
    /// Sends `request` and returns the final response, whatever its status.
    ///
    /// - Throws: `HTTPTransportError` when no response arrived (DNS, connection, TLS, timeout) or the
    ///   request may not be sent (plain http to a host that is not loopback).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// Why an HTTP request got no response.
public struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broad kind of failure.
    public enum Kind: Sendable, Equatable {
        /// The URL may not be used: not http(s), or plain http to a host that is not loopback.
        case insecureURL
        /// Host name resolution failed.
        case resolve
        /// The TCP connection could not be established.
        case connect
        /// TLS handshake or certificate verification failed.
        case tls
        /// The connect or total timeout expired.
        case timeout
        /// libcurl could not be loaded.
        case unavailable
        /// Any other transport failure.
        case other
    }

    /// The broad kind of failure.
    public var kind: Kind
    /// One line saying what failed, including the host, e.g. `could not connect to 127.0.0.1:9: Connection refused`.
    public var message: String

    /// Creates a transport error.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension HTTPClient {
    /// Sends `request`, turning every way of getting no response into the `OAuthError` a caller
    /// acts on: a transport failure is `.network` (or `.configuration` for an insecure URL or a
    /// missing libcurl), task cancellation is `.cancelled`.
    package func sendForOAuth(_ request: HTTPRequest) async throws(OAuthError) -> HTTPResponse {
        do {
            return try await send(request)
        } catch let error as HTTPTransportError {
            throw OAuthError(transport: error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .network("\(error)")
        }
    }
}

extension OAuthError {
    /// Maps a transport failure to the error the caller acts on.
    init(transport error: HTTPTransportError) {
        switch error.kind {
        case .insecureURL, .unavailable: self = .configuration(Problem(error.message))
        default: self = .network(error.message)
        }
    }
}

extension HTTPClient {
    /// Sends the token or revocation request `make` builds for `client`; when the server refuses a
    /// secret sent in the body (`invalid_client`), sends it once more with the secret in HTTP Basic
    /// (see `ClientAuthentication`). Returns the answer and the client as it was last sent.
    package func sendAuthenticating(
        _ client: ClientConfiguration, _ make: (ClientConfiguration) -> HTTPRequest
    ) async throws(OAuthError) -> (response: HTTPResponse, client: ClientConfiguration) {
        let response = try await sendForOAuth(make(client))
        guard client.clientSecret != nil, client.authentication == .post, TokenResponse.refusesClientAuthentication(response) else {
            return (response, client)
        }
        var basic = client
        basic.authentication = .basic
        return (try await sendForOAuth(make(basic)), basic)
    }
}
