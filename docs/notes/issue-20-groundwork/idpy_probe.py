#!/usr/bin/env python3
"""Drive idpy_op.py: code+PKCE, refresh (scope/resource/audience), token exchange variants.
Prints each request and the JSON answer (JWT payloads decoded)."""
import base64, hashlib, json, secrets, sys
from urllib.parse import urlparse, parse_qs
import requests

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8820"
CID = "public-cli"
REDIR = "http://127.0.0.1:8765/callback"
TE = "urn:ietf:params:oauth:grant-type:token-exchange"
AT = "urn:ietf:params:oauth:token-type:access_token"
RT = "urn:ietf:params:oauth:token-type:refresh_token"


def jwt_payload(tok):
    try:
        p = tok.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    except Exception:
        return None


def show(title, r):
    print(f"\n### {title}\nHTTP {r.status_code}")
    try:
        body = r.json()
    except Exception:
        print(r.text[:500]); return {}
    out = dict(body)
    for k in ("access_token", "refresh_token", "id_token"):
        if k in out:
            out[k] = {"len": len(out[k]), "payload": jwt_payload(out[k])}
    print(json.dumps(out, indent=1, sort_keys=True))
    return body


def login(scope, extra=None, verifier=None, method="S256"):
    v = verifier or secrets.token_urlsafe(48)
    ch = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()
    q = {"response_type": "code", "client_id": CID, "redirect_uri": REDIR, "scope": scope,
         "state": "st1", "code_challenge": ch, "code_challenge_method": method}
    if "offline_access" in scope:
        q["prompt"] = "consent"  # OIDC Core 11: offline_access needs prompt=consent (else 400 "consent in prompt")
    q.update(extra or {})
    r = requests.get(BASE + "/authorization", params=q, allow_redirects=False)
    loc = r.headers.get("Location", "")
    print(f"\n### authorize scope={scope!r} extra={extra}\nHTTP {r.status_code} Location: {loc[:200]}")
    if not loc:
        print(r.text[:400])
    qs = parse_qs(urlparse(loc).query)
    return qs.get("code", [None])[0], v, qs


def post(data, title):
    return show(title, requests.post(BASE + "/token", data=data))


def main():
    print(json.dumps(requests.get(BASE + "/.well-known/openid-configuration").json()["grant_types_supported"]))
    # --- PKCE enforcement
    r = requests.get(BASE + "/authorization", params={"response_type": "code", "client_id": CID,
                     "redirect_uri": REDIR, "scope": "openid", "state": "x"}, allow_redirects=False)
    print("\n### authorize without PKCE\nHTTP", r.status_code, r.headers.get("Location", r.text[:300]))
    code, v, _ = login("openid read", {"code_challenge_method": "plain"})
    code, v, _ = login("openid offline_access read write", {"prompt": ""})
    code, v, _ = login("openid offline_access read write")
    post({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIR, "client_id": CID,
          "code_verifier": "wrong" * 10}, "code exchange with WRONG verifier")
    code, v, qs = login("openid offline_access read write")
    print("authorization response params:", sorted(qs))
    tok = post({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIR,
                "client_id": CID, "code_verifier": v}, "code exchange (public client, PKCE)")
    at, rt = tok.get("access_token"), tok.get("refresh_token")

    # --- refresh variants
    t = post({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "scope": "read"},
             "refresh with narrower scope=read")
    rt2 = t.get("refresh_token", rt)
    post({"grant_type": "refresh_token", "refresh_token": rt2, "client_id": CID, "scope": "read admin"},
         "refresh with wider scope (admin not granted)")
    post({"grant_type": "refresh_token", "refresh_token": rt2, "client_id": CID,
          "resource": "https://api.example/"}, "refresh with resource=https://api.example/")
    post({"grant_type": "refresh_token", "refresh_token": rt2, "client_id": CID,
          "resource": "https://evil.example/"}, "refresh with unknown resource")
    post({"grant_type": "refresh_token", "refresh_token": rt2, "client_id": CID,
          "audience": "downstream-api"}, "refresh with audience=downstream-api")
    post({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID},
         "refresh again with the FIRST refresh token (rotation/reuse?)")

    # --- token exchange
    base = {"grant_type": TE, "client_id": CID, "subject_token": at, "subject_token_type": AT}
    post(dict(base), "TE: access_token, no target")
    post(dict(base, audience="downstream-api"), "TE: audience=downstream-api")
    post(dict(base, resource="https://api.example/"), "TE: resource=https://api.example/")
    post(dict(base, resource="https://api.example/", audience="other-api", scope="read"),
         "TE: resource + audience + scope=read")
    post(dict(base, audience="unknown-api"), "TE: audience=unknown-api (refused target)")
    post(dict(base, resource="https://evil.example/"), "TE: resource=https://evil.example/ (refused target)")
    post(dict(base, scope="admin"), "TE: scope=admin (not granted)")
    post(dict(base, requested_token_type=RT), "TE: requested_token_type=refresh_token")
    post(dict(base, requested_token_type="urn:ietf:params:oauth:token-type:id_token"),
         "TE: requested_token_type=id_token (unsupported)")
    post(dict(base, actor_token=at, actor_token_type=AT), "TE: with actor_token")
    post(dict(base, subject_token="garbage"), "TE: bad subject_token")
    post(dict(base, subject_token_type=RT), "TE: access token labelled as refresh_token")
    post({"grant_type": TE, "client_id": CID, "subject_token": rt2, "subject_token_type": RT},
         "TE: subject = refresh token")
    post({"grant_type": TE, "client_id": CID, "subject_token": rt2, "subject_token_type": RT,
          "audience": "downstream-api"}, "TE: subject = refresh token + audience")
    post({"grant_type": TE, "subject_token": at, "subject_token_type": AT},
         "TE: no client_id at all")


if __name__ == "__main__":
    main()
