from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from oauth2_provider import urls as dot_urls
from oauth2_provider.views import OAuthServerMetadataView

from . import grants, id_tokens, views

# DOT's endpoints under /o/, with the token and revocation endpoints counted and the
# discovery document extended (these patterns come first, so they win over DOT's).
oauth2_patterns = (
    grants.oauth2_patterns
    + id_tokens.oauth2_patterns
    + [
        path("authorize/", views.IssAuthorizationView.as_view(), name="authorize"),
        path("token/", views.CountingTokenView.as_view(), name="token"),
        path("revoke_token/", views.CountingRevokeTokenView.as_view(), name="revoke-token"),
        re_path(
            r"^\.well-known/openid-configuration/?$",
            views.ExtendedDiscoveryView.as_view(),
            name="oidc-connect-discovery-info",
        ),
    ]
    + dot_urls.metadata_urlpatterns
    + dot_urls.base_urlpatterns
    + dot_urls.oidc_urlpatterns,
    dot_urls.app_name,
)

urlpatterns = [
    path("", views.home),
    path("o/", include(oauth2_patterns)),
    # RFC 8414 location for the issuer http://HOST/o
    path(".well-known/oauth-authorization-server/o", OAuthServerMetadataView.as_view()),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/me", views.api_me),
    path("test/stats", views.stats),
    path("test/stats/reset", views.stats_reset),
    re_path(r"^static/(?P<path>.*)$", serve_static, {"insecure": True}),
] + grants.urlpatterns + id_tokens.urlpatterns
