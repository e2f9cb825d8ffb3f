from gecobench.explainers import Explainer


class LoopsForever(Explainer):
    name = "loops_forever"

    def explain(self, model, tokenizer, words, targets):
        while True:
            pass
