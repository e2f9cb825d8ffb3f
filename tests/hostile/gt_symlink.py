"""Hostile: plants a symlink to the host's data folder in its work folder and reads through it."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class Symlink(Explainer):
    name = "gt_symlink"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        # symlink(2) through libc: the audit hook would name os.symlink; the OS must contain it on its own.
        ctypes.pythonapi.symlink(HOST["data_dir"].encode(), b"data_link")
        with open(os.path.join("data_link", "geco", "binary_all", "test.jsonl")) as handle:
            handle.read()
        return [np.ones(len(w)) for w in words]
