"""Hostile: tries to join PID 1's network namespace with setns."""

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


class ReentersNamespace(Explainer):
    name = "net_reenter_namespace"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        libc = ctypes.pythonapi
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open("1/ns/net", os.O_RDONLY, dir_fd=proc)
        if libc.setns(fd, 0x40000000) != 0:
            error = _errno()
            raise PermissionError(error, "setns: " + os.strerror(error))
        return [np.ones(len(w)) for w in words]
