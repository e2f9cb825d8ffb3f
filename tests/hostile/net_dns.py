"""Hostile: resolves and connects to a public host from a child interpreter."""

import json

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


class Dns(Explainer):
    name = "net_dns"

    def explain(self, model, tokenizer, words, targets):
        import ctypes
        import sys

        code = "import socket; socket.create_connection(('huggingface.co', 443), 5)"
        status = ctypes.pythonapi.system(f"{sys.executable} -c \"{code}\" 2>/dev/null".encode())
        if status != 0:
            raise ConnectionError(f"no route to the internet from the sandbox (status {status})")
        return [np.ones(len(w)) for w in words]
