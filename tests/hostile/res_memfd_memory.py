"""Hostile: holds memory in memfd_create files (written with write(), never mapped: RLIMIT_AS does not count it)."""

import json
import os

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# One chunk per file: each file stays under RLIMIT_FSIZE (64 MiB in the hostile suite), as the attack's did.
CHUNK = b"\1" * (32 << 20)


class MemfdHog(Explainer):
    name = "res_memfd_memory"

    def explain(self, model, tokenizer, words, targets):
        held, written = [], 0
        # Far past any run's memory limit: the run's cgroup must stop it (the kernel's OOM killer, or a refused
        # write) long before the machine's memory runs out.
        while written < (8 << 30):
            fd = os.memfd_create(f"hog{len(held)}")
            os.write(fd, CHUNK)
            written += len(CHUNK)
            held.append(fd)
        raise RuntimeError(f"memfd memory not limited: {written >> 20} MiB held")
