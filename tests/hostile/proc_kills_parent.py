"""Hostile: kills its parent process (the worker, at version 0.2.1)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class KillsParent(Explainer):
    name = "proc_kills_parent"

    def explain(self, model, tokenizer, words, targets):
        import signal

        os.kill(os.getppid(), signal.SIGKILL)
        return [np.ones(len(w)) for w in words]
