"""Hostile: sleeps without using CPU (only the wall clock stops it)."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class SleepsForever(Explainer):
    name = "res_sleeps_forever"

    def explain(self, model, tokenizer, words, targets):
        import time

        while True:
            time.sleep(60)
