"""Hostile: creates a file in a host folder relative to a directory descriptor."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class WritesDirFd(Explainer):
    name = "write_dirfd"

    def explain(self, model, tokenizer, words, targets):
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        fd = os.open(os.path.join(HOST["outside"], "pwned").lstrip("/"), os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=root)
        os.write(fd, b"pwned")
        return [np.ones(len(w)) for w in words]
