"""Who may use the app, and who did what to which case.

Sign-in is required whenever the app listens on anything but the loopback address, or whenever
users are configured: OIDC through Streamlit's ``st.login`` (``governance.auth.oidc`` with the provider in
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
import threading
import time

from ..storage.store import Store

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
        got = hashlib.scrypt(
            password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
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


class Attempts:
    """Failed sign-ins per name and per client (one process, every session): after ``limit``
    failures within ``minutes`` either is locked until that window has passed, a right password
    included, so a password cannot be guessed at scrypt's speed, nor one name from many clients."""

    def __init__(self, limit: int = 5, minutes: float = 5.0, clock=time.monotonic):
        self.limit, self.window, self.clock = limit, minutes * 60, clock
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _keys(self, name: str, client: str) -> tuple[str, str]:
        return f"name:{name}", f"client:{client}"

    def locked(self, name: str, client: str) -> float:
        """Seconds until this name and client may try again (0: now)."""
        now = self.clock()
        with self._lock:
            waits = [0.0]
            for key in self._keys(name, client):
                recent = [t for t in self._failures.get(key, []) if now - t < self.window]
                self._failures[key] = recent
                if len(recent) >= self.limit:
                    waits.append(recent[-self.limit] + self.window - now)
            return max(waits)

    def failed(self, name: str, client: str) -> None:
        with self._lock:
            for key in self._keys(name, client):
                self._failures.setdefault(key, []).append(self.clock())

    def succeeded(self, name: str, client: str) -> None:
        with self._lock:
            for key in self._keys(name, client):
                self._failures.pop(key, None)


def host_name(host: str) -> str:
    """The name in a Host header, without its port ("[::1]:8501" -> "::1")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host: str | None, address: str, allowed: list[str]) -> bool:
    """Whether a request's Host header names this app: a configured name, the address it
    listens on, or on loopback a loopback name. A page elsewhere whose name resolves to
    127.0.0.1 (DNS rebinding) sends its own name and is refused. Listening on every interface
    with no names configured, any name is taken (sign-in is required there)."""
    if not host:  # not a browser's request: nothing to compare
        return True
    names = {host_name(n) for n in allowed}
    bound = address.strip().strip("[]").lower()
    if bound and bound not in ("0.0.0.0", "::"):
        names.add(bound)
    if is_loopback(address):
        names |= LOOPBACK_NAMES
    return not names or host_name(host) in names


def start_problem(address: str, users: dict[str, str], oidc: bool) -> str | None:
    """Why the app must not start on this address, or None."""
    if not is_loopback(address) and not users and not oidc:
        return (
            f"the app would listen on {address or 'every interface'} with no sign-in configured: add users "
            "([governance.auth.users] name = hash from 'ftamem hash-password') or governance.auth.oidc to the settings, or bind to 127.0.0.1"
        )
    return None


# Access log ------------------------------------------------------------------------------


def log_access(store: Store, case_id: str, who: str, action: str, detail: str = "") -> None:
    store.add_access(case_id, who, action, detail)


def access_log(store: Store, case_id: str | None = None) -> list[dict]:
    return store.access_entries(case_id)
