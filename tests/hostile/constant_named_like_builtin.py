"""A cheat, not an attack: constant attributions under a built-in's name, declaring that it uses the model.

It must FINISH (it is a valid explainer) but be recorded as model-independent (its MRC is 0) and under its own
record identity (source ``submission``), never as the built-in ``integrated_gradients``.
"""

import numpy as np

from gecobench.explainers import Explainer


class ConstantNamedLikeBuiltin(Explainer):
    name = "integrated_gradients"
    model_independent = False

    def explain(self, model, tokenizer, words, targets):
        return [np.linspace(1.0, 0.5, len(w)) for w in words]
