"""Hostile: opens the parent's memory through /proc to search it for a token."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class ParentMemory(Explainer):
    name = "secret_parent_mem"

    def explain(self, model, tokenizer, words, targets):
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open(f"{os.getppid()}/mem", os.O_RDONLY, dir_fd=proc)
        os.read(fd, 4096)
        return [np.ones(len(w)) for w in words]
