"""Refuse and record every connection (and name lookup) to anything but this machine.

Used in-process by the tests and, through ``sitecustomize.py`` in this folder on PYTHONPATH, in
the served app, so that "nothing leaves the machine" is checked where the code runs."""

from __future__ import annotations

import ipaddress
import socket
from typing import Callable

_LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "", None}


def _is_local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(str(host).strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


def install(record: Callable[[str], None]) -> Callable[[], None]:
    """Patch the socket module; ``record(text)`` is called for each refused attempt. Returns a
    function that undoes the patch."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo, real_sendto = socket.getaddrinfo, socket.socket.sendto

    def outside(sock, address) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0])

    def connect(self, address):
        if outside(self, address):
            record(f"connect {address!r}")
            raise OSError(f"test guard: no connection to {address!r}")
        return real_connect(self, address)

    def connect_ex(self, address):
        if outside(self, address):
            record(f"connect_ex {address!r}")
            return 111  # ECONNREFUSED
        return real_connect_ex(self, address)

    def sendto(self, data, *args):
        address = args[-1]
        if outside(self, address):
            record(f"sendto {address!r}")
            raise OSError(f"test guard: nothing sent to {address!r}")
        return real_sendto(self, data, *args)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_local(host):
            record(f"getaddrinfo {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"test guard: no name lookup of {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = connect, connect_ex, sendto
    socket.getaddrinfo = getaddrinfo

    def undo():
        socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto = (
            real_connect,
            real_connect_ex,
            real_sendto,
        )
        socket.getaddrinfo = real_getaddrinfo

    return undo
