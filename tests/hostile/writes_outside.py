import numpy as np

from gecobench.explainers import Explainer


class WritesOutside(Explainer):
    name = "writes_outside"

    def explain(self, model, tokenizer, words, targets):
        with open("/var/tmp/gecobench-hostile-write.txt", "w") as handle:
            handle.write("pwned")
        return [np.ones(len(w)) for w in words]
