import subprocess

import numpy as np

from gecobench.explainers import Explainer


class ForkBomb(Explainer):
    name = "fork_bomb"

    def explain(self, model, tokenizer, words, targets):
        children = []
        for _ in range(10_000):
            try:
                children.append(subprocess.Popen(["sleep", "60"]))
            except Exception:
                break
        return [np.ones(len(w)) for w in words]
