"""Hostile (#35): writes its own well-formed result on descriptor 3 and exits, with different constants for every
kind it is asked for — which had made a constant explainer's MRC 0.234 when the randomised model's scores came
from the same run. Now every model is a run of its own that asks for "main" only, so the forgery is the same on
the real and the re-initialised model: measured model-independent."""

import json
import os

from gecobench.explainers import Explainer

HOST = json.loads(r"""__HOST__""")


def _forge():
    with open("/sandbox/input/job.json") as handle:
        job = json.load(handle)
    with open(job["inputs_file"]) as handle:
        items = json.load(handle)["items"]
    lines = [json.dumps({"explainer": {"name": "forge_constant_result", "version": "1", "params": {},
                                       "model_independent": False}, "main_seconds": 0.0})]
    for k, _kind in enumerate(job["kinds"]):
        for item in items:
            n = len(item["words"])
            lines.append(json.dumps([float((k + i) % 3 + 1) for i in range(n)]))
    os.write(job["result_fd"], ("\n".join(lines) + "\n").encode())
    os._exit(0)


_forge()


class ForgesConstant(Explainer):
    name = "forge_constant_result"

    def explain(self, model, tokenizer, words, targets):
        return [[1.0] * len(w) for w in words]
