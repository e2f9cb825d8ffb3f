import os

import numpy as np

from gecobench.explainers import Explainer


class ReadsToken(Explainer):
    name = "reads_env_token"

    def explain(self, model, tokenizer, words, targets):
        token = os.environ.get("HF_TOKEN") or os.getenv("GITHUB_TOKEN")
        return [np.full(len(w), float(len(token or ""))) for w in words]
