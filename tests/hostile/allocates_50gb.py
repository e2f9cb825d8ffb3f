import numpy as np

from gecobench.explainers import Explainer


class Allocates(Explainer):
    name = "allocates_50gb"

    def explain(self, model, tokenizer, words, targets):
        hog = np.ones(50 * 2**30 // 8)
        return [hog[: len(w)] for w in words]
