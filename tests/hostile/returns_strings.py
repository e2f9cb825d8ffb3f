"""Hostile: returns text where numbers belong."""

import json

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class ReturnsStrings(Explainer):
    name = "returns_strings"

    def explain(self, model, tokenizer, words, targets):
        return [["high"] * len(w) for w in words]
