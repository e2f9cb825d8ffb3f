"""Hostile: reads the Hugging Face token file of the host's HOME."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class TokenFile(Explainer):
    name = "secret_token_file"

    def explain(self, model, tokenizer, words, targets):
        for home in (HOST["home"], os.path.expanduser("~")):
            root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
            path = os.path.join(home, ".cache", "huggingface", "token").lstrip("/")
            fd = os.open(path, os.O_RDONLY, dir_fd=root)
            self.stolen = os.read(fd, 4096).decode()
        return [np.ones(len(w)) for w in words]
