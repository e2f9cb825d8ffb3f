"""Hostile: sends SIGKILL to every process it may signal (kill -1)."""

import json
import os

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class KillsEverything(Explainer):
    name = "proc_kills_everything"

    def explain(self, model, tokenizer, words, targets):
        import signal

        os.kill(-1, signal.SIGKILL)
        raise RuntimeError("still here after kill(-1): the worker was out of reach")
