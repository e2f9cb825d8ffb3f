"""Hostile: runs a shell through ctypes (torch already loaded ctypes) and tries to act as root."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


class CtypesSystem(Explainer):
    name = "proc_ctypes_system"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        libc = ctypes.pythonapi
        libc.system(b"id -u > uid.txt")
        uid = open("uid.txt").read().strip()
        status = libc.system(f"touch {HOST['outside']}/pwned_by_shell 2>/dev/null".encode())
        raise PermissionError(f"the shell ran as uid {uid}; touching a host file gave status {status}")
