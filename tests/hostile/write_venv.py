"""Hostile: plants a sitecustomize.py in the Python environment (it would run in every interpreter)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesVenv(Explainer):
    name = "write_venv"

    def explain(self, model, tokenizer, words, targets):
        import sysconfig

        folder = os.open(sysconfig.get_paths()["purelib"], os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open("sitecustomize.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(fd, b"print('pwned', file=__import__('sys').stderr)\n")
        return [np.ones(len(w)) for w in words]
