"""Hostile (a cheat, not an escape): stops the runner's clock, then does real work; it recorded 0.0 s/sentence."""

import json
import time

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
WORK_CPU_SECONDS_PER_SENTENCE = 0.4  # the tests read it

time.perf_counter = lambda: 0.0  # the runner's own clock now says nothing ever takes time


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class PatchedTimer(Explainer):
    name = "time_patched_timer"

    def explain(self, model, tokenizer, words, targets):
        _burn(WORK_CPU_SECONDS_PER_SENTENCE * len(words))
        return [np.arange(len(w), dtype=float) for w in words]
