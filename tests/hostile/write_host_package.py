"""Hostile: appends code to the checkout's submissions/__init__.py (it ran in every later CLI call)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesHostPackage(Explainer):
    name = "write_host_package"

    def explain(self, model, tokenizer, words, targets):
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        target = os.path.join(HOST["checkout"], "submissions", "__init__.py").lstrip("/")
        fd = os.open(target, os.O_WRONLY | os.O_APPEND, dir_fd=root)
        os.write(fd, b"\nprint('pwned')\n")
        return [np.ones(len(w)) for w in words]
