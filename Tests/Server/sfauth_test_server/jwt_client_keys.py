"""The JWT bearer client's key pairs (RFC 7523): made once per run directory by serve.py.

The private keys are the client's (the tests sign assertions with them), the public ones are what
the server has registered for that client -- as Salesforce keeps the certificate uploaded to a
connected app. Files in the run directory (private keys 0600):

  jwt-client-rsa.pem         RSA 2048, PKCS#8 ("BEGIN PRIVATE KEY", what OpenSSL 3 writes)   RS256
  jwt-client-rsa-pkcs1.pem   the same key, PKCS#1 ("BEGIN RSA PRIVATE KEY", OpenSSL 1.x's genrsa)
  jwt-client-ec.pem          EC P-256, PKCS#8 ("BEGIN PRIVATE KEY")                           ES256
  jwt-client-ec-sec1.pem     the same key, SEC 1 ("BEGIN EC PRIVATE KEY", openssl ecparam -genkey)
  jwt-unregistered-rsa.pem   RSA 2048, PKCS#8, registered nowhere (a wrong key for tests)
  jwt-client-keys.json       JWKS of the two registered public keys (kid = RFC 7638 thumbprint)

Needs only `cryptography` and `jwcrypto` (no Django), so serve.py can call it before Django starts.
"""

import json
import os

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwcrypto import jwk

RSA_KEY = "jwt-client-rsa.pem"
RSA_KEY_PKCS1 = "jwt-client-rsa-pkcs1.pem"
EC_KEY = "jwt-client-ec.pem"
EC_KEY_SEC1 = "jwt-client-ec-sec1.pem"
UNREGISTERED_KEY = "jwt-unregistered-rsa.pem"
JWKS = "jwt-client-keys.json"

ALL_FILES = (RSA_KEY, RSA_KEY_PKCS1, EC_KEY, EC_KEY_SEC1, UNREGISTERED_KEY, JWKS)


def _pem(private_key, private_format):
    return private_key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=private_format,
        encryption_algorithm=serialization.NoEncryption(),
    )


def _write(path, data, mode):
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _public_jwk(private_pem, alg):
    key = jwk.JWK.from_pem(private_pem).public()
    data = json.loads(key.export_public())
    data.update({"kid": key.thumbprint(), "alg": alg, "use": "sig"})
    return data


def ensure_client_keys(run_dir):
    """Create the key files unless they all exist (RSA generation costs ~0.1 s a key)."""
    if all(os.path.exists(os.path.join(run_dir, name)) for name in ALL_FILES):
        return
    pkcs8 = serialization.PrivateFormat.PKCS8
    legacy = serialization.PrivateFormat.TraditionalOpenSSL  # PKCS#1 for RSA, SEC 1 for EC
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    files = {
        RSA_KEY: _pem(rsa_key, pkcs8),
        RSA_KEY_PKCS1: _pem(rsa_key, legacy),
        EC_KEY: _pem(ec_key, pkcs8),
        EC_KEY_SEC1: _pem(ec_key, legacy),
        UNREGISTERED_KEY: _pem(other_key, pkcs8),
    }
    for name, data in files.items():
        _write(os.path.join(run_dir, name), data, 0o600)
    jwks = {"keys": [_public_jwk(files[RSA_KEY], "RS256"), _public_jwk(files[EC_KEY], "ES256")]}
    # Written last: its presence means the set is complete.
    _write(os.path.join(run_dir, JWKS), (json.dumps(jwks, indent=2) + "\n").encode(), 0o644)


def registered_keys(jwks_path):
    """The public keys in a JWKS file, as jwcrypto keys."""
    with open(jwks_path) as f:
        return [jwk.JWK(**entry) for entry in json.load(f)["keys"]]
