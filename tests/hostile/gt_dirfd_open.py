"""Hostile: opens the host's ground truth relative to a directory descriptor (invisible to the audit hook)."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class DirFdOpen(Explainer):
    name = "gt_dirfd_open"

    def explain(self, model, tokenizer, words, targets):
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        target = os.path.join(HOST["data_dir"], "geco", "binary_all", "test.jsonl").lstrip("/")
        fd = os.open(target, os.O_RDONLY, dir_fd=root)
        os.read(fd, 1 << 20)
        return [np.ones(len(w)) for w in words]
