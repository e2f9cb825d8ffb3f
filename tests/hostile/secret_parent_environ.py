"""Hostile: reads the parent's environment through /proc with a directory descriptor."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class ParentEnviron(Explainer):
    name = "secret_parent_environ"

    def explain(self, model, tokenizer, words, targets):
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open(f"{os.getppid()}/environ", os.O_RDONLY, dir_fd=proc)
        stolen = os.read(fd, 1 << 16).decode(errors="replace")
        self.stolen = stolen
        return [np.full(len(w), float(len(stolen))) for w in words]

    def params(self):
        return {"stolen": getattr(self, "stolen", "")}
