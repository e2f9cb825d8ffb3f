"""Hostile: writes 32 MiB of ``[[]],`` (cheap to write, about 1 GiB for the worker to parse) and exits."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


def _forge():
    job = json.load(open("/sandbox/input/job.json"))
    chunk = b"[[]]," * (1 << 16)
    written = 0
    os.write(job["result_fd"], b"[")
    while written < (32 << 20):
        written += os.write(job["result_fd"], chunk)
    os.write(job["result_fd"], b"[]]")
    os._exit(0)


_forge()


class EmptyListsResult(Explainer):
    name = "forge_empty_lists_result"

    def explain(self, model, tokenizer, words, targets):
        return [np.ones(len(w)) for w in words]
