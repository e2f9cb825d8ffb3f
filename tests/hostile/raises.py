from gecobench.explainers import Explainer


class Raises(Explainer):
    name = "raises"

    def explain(self, model, tokenizer, words, targets):
        raise RuntimeError("deliberate failure inside explain")
