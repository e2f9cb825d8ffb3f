"""Hostile (a cheat, not an escape): does its work in fit(), which the runner's clock never saw (0.0005 s/sentence)."""

import json
import time

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
WORK_CPU_SECONDS_IN_FIT = 1.5  # per sandbox run; the tests read it


class WorkInFit(Explainer):
    name = "time_work_in_fit"

    def fit(self, train_words, train_labels):
        end = time.process_time() + WORK_CPU_SECONDS_IN_FIT
        while time.process_time() < end:
            pass
        self.table = {w: float(len(w)) for sentence in train_words[:50] for w in sentence}

    def explain(self, model, tokenizer, words, targets):
        return [np.array([self.table.get(w, 0.5) for w in sentence]) for sentence in words]
