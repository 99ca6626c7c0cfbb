#!/usr/bin/env python3
"""nanoidp 3.4.0: resource/scope on refresh, token exchange (absent). Login via direct POST /authorize."""
import base64, hashlib, json, secrets, sys
from urllib.parse import urlencode, urlparse, parse_qs
import requests
sys.argv = sys.argv[:1]
from idpy_probe import show
B = "http://127.0.0.1:8821"; CID = "gw-cli"; R = "http://127.0.0.1:9999/callback"

def login(scope, resources=()):
    v = secrets.token_urlsafe(48)
    ch = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()
    q = [("response_type", "code"), ("client_id", CID), ("redirect_uri", R), ("scope", scope),
         ("state", "s"), ("code_challenge", ch), ("code_challenge_method", "S256")] + [("resource", r) for r in resources]
    r = requests.post(B + "/authorize?" + urlencode(q), data={"username": "alice", "password": "alice-password"},
                      allow_redirects=False)
    loc = r.headers.get("Location", "")
    print(f"\n### POST /authorize resources={list(resources)} -> {r.status_code} {loc[:160]}")
    if not loc: print(r.text[:300])
    return parse_qs(urlparse(loc).query).get("code", [None])[0], v

def tok(data, title, multi=None):
    items = list(data.items()) + list(multi or [])
    return show(title, requests.post(B + "/token", data=items))

if __name__ == "__main__":
  code, v = login("openid offline_access profile", ["https://api.example/", "https://other.example/"])
  t = tok({"grant_type": "authorization_code", "code": code, "redirect_uri": R, "client_id": CID, "code_verifier": v},
          "code exchange (no resource at /token => inherits both)")
  rt = t["refresh_token"]
  t = tok({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "resource": "https://api.example/",
           "scope": "openid"}, "refresh narrowing resource=https://api.example/ and scope=openid")
  rt = t["refresh_token"]
  t = tok({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "resource": "https://other.example/"},
          "refresh with the OTHER original resource (after narrowing)")
  rt = t["refresh_token"]
  t = tok({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "resource": "https://evil.example/"},
          "refresh with a resource never granted")
  t = tok({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "scope": "openid email"},
          "refresh widening scope")
  t = tok({"grant_type": "refresh_token", "refresh_token": rt, "client_id": CID, "audience": "x"},
          "refresh with audience=x (not a nanoidp parameter)")
  rt = t.get("refresh_token", rt)
  t = tok({"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "client_id": CID,
           "subject_token": t.get("access_token", "x"), "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"},
          "token exchange")
  code, v = login("openid", ["https://evil.example/"])
