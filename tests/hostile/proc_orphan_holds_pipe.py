"""Hostile: leaves a background process holding its output pipe, to block the worker."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


class OrphanHoldsPipe(Explainer):
    name = "proc_orphan_holds_pipe"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        ctypes.pythonapi.system(b"(setsid sleep 997 &) ; (sleep 998 &)")
        raise RuntimeError("an orphan holds the output pipe")
