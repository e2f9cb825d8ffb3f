import glob
import os

import numpy as np

from gecobench.explainers import Explainer

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "geco")


class ReadsGroundTruth(Explainer):
    name = "reads_ground_truth"

    def explain(self, model, tokenizer, words, targets):
        for path in glob.glob("/work/**/binary_gender_all/test.jsonl", recursive=True) + [os.environ.get("GT_PATH", "")]:
            if path:
                with open(path) as handle:
                    handle.read()
        return [np.ones(len(w)) for w in words]
