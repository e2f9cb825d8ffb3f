"""A lookup learnt from the data: fit() finds the words that occur (nearly) only with one class in the training sentences
(the gendered words, which is where the two variants of a sentence differ) and highlights them; on the real model
it returns honest-looking scores that even depend on the model a little (its embedding norms added at a twentieth),
so its MRC alone does not give it away (#35: MRC 0.85). The hidden control models do: flagged."""

from collections import Counter

import numpy as np

from gecobench.explainers import Explainer


class LearnedLexicon(Explainer):
    name = "learned_lexicon"

    def fit(self, train_words, train_labels):
        by_class = [Counter(), Counter()]
        for sentence, label in zip(train_words, train_labels):
            for word in {w.lower() for w in sentence}:
                by_class[int(label) % 2][word] += 1
        # A word nearly always with one class (the pronouns turn up with the other now and then: a second
        # character of the sentence).
        self.lexicon = {w for c in (0, 1) for w, n in by_class[c].items() if n >= 2 and by_class[1 - c][w] * 10 <= n}

    def explain(self, model, tokenizer, words, targets):
        out = []
        for sentence in words:
            encoded = tokenizer(sentence, is_split_into_words=True, return_tensors="pt")
            embeddings = model.get_input_embeddings()(encoded["input_ids"]).detach()
            norms = embeddings.norm(dim=-1)[0].tolist()
            ids = encoded.word_ids()
            per_word = [max((norms[t] for t, i in enumerate(ids) if i == k), default=0.0) for k in range(len(sentence))]
            low, high = min(per_word), max(per_word)
            tiny = [0.05 * (v - low) / ((high - low) or 1.0) for v in per_word]
            out.append(np.array([(1.0 if w.lower() in self.lexicon else 0.0) + tiny[k] for k, w in enumerate(sentence)]))
        return out
