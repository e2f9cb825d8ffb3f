"""Hostile: starts 200 background processes through the shell (no audit event) and leaves them."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.


class SpawnsOrphans(Explainer):
    name = "proc_spawns_orphans"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        ctypes.pythonapi.system(b"i=0; while [ $i -lt 200 ]; do sleep 997 & i=$((i+1)); done 2>/dev/null")
        raise RuntimeError("orphans left behind; the worker must kill them")
