"""Hostile: prints hundreds of MiB (the 0.2.1 worker held all of it in memory)."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class PrintsFlood(Explainer):
    name = "res_prints_flood"

    def explain(self, model, tokenizer, words, targets):
        import sys

        line = "y" * 1023 + "\n"
        for _ in range(200 * 1024):
            sys.stdout.write(line)
        sys.stdout.flush()
        raise RuntimeError("flooded the output")
