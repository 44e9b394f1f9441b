"""Who may use the app, and who did what to which case.

Sign-in is required whenever the app listens on anything but the loopback address, or whenever
users are configured: OIDC through Streamlit's ``st.login`` (``auth.oidc`` with the provider in
``.streamlit/secrets.toml``), otherwise named users with scrypt password hashes in the settings
(``ftamem hash-password`` writes one; a password is never stored). The access log records who
viewed, changed, built, asked, exported or erased which case, from the app and the command line.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import os

from .models import utcnow
from .store import Store

# scrypt's cost (2**14, 8, 1): about 16 MB and 50 ms per check, the common interactive setting.
_N, _R, _P = 2**14, 8, 1
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def hash_password(password: str) -> str:
    if not password:
        raise ValueError("an empty password")
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        expected = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


def check_user(users: dict[str, str], name: str, password: str) -> bool:
    """The name is configured and the password is its own (the same work either way)."""
    stored = users.get(name, "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    return verify_password(password, stored) and name in users


def is_loopback(address: str) -> bool:
    address = (address or "").strip().strip("[]")
    if address in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False  # a host name or "" (every interface)


def sign_in_required(address: str, users: dict[str, str], oidc: bool) -> bool:
    return bool(users) or oidc or not is_loopback(address)


def start_problem(address: str, users: dict[str, str], oidc: bool) -> str | None:
    """Why the app must not start on this address, or None."""
    if not is_loopback(address) and not users and not oidc:
        return (f"the app would listen on {address or 'every interface'} with no sign-in configured: add users "
                "([auth.users] name = hash from 'ftamem hash-password') or auth.oidc to the settings, or bind to 127.0.0.1")
    return None


# Access log ------------------------------------------------------------------------------


def log_access(store: Store, case_id: str, who: str, action: str, detail: str = "") -> None:
    with store.transaction():
        if store.case_exists(case_id):
            store.conn.execute("INSERT INTO access_log (case_id, who, action, detail, at) VALUES (?, ?, ?, ?, ?)",
                               (case_id, who, action, detail, utcnow()))


def access_log(store: Store, case_id: str | None = None) -> list[dict]:
    if case_id is None:
        return store._rows("SELECT * FROM access_log ORDER BY id")
    return store.case_rows("access_log", case_id, "id", {})
