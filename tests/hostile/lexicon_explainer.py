"""A lookup, not an explanation: highlights a hand-written list of pronouns and gendered nouns (MA 0.992 on OLA in
#35, above every model-based built-in). It never looks at the model; on the hub's hidden control models, whose
correct explanation is a secret set of non-gendered words, it scores near chance: flagged "explains the data, not
the model"."""

import numpy as np

from gecobench.explainers import Explainer

GENDERED = {
    "he", "she", "him", "her", "his", "hers", "himself", "herself", "mr", "mrs", "miss", "ms", "sir", "madam",
    "man", "woman", "men", "women", "boy", "girl", "boys", "girls", "son", "daughter", "sons", "daughters",
    "father", "mother", "brother", "sister", "brothers", "sisters", "husband", "wife", "uncle", "aunt",
    "nephew", "niece", "king", "queen", "lord", "lady", "gentleman", "gentlemen", "ladies", "grandfather",
    "grandmother", "papa", "mama", "sire", "dame", "prince", "princess", "duke", "duchess", "widow", "widower",
}


class LexiconExplainer(Explainer):
    name = "lexicon_explainer"

    def explain(self, model, tokenizer, words, targets):
        return [np.array([1.0 if w.lower() in GENDERED else 0.0 for w in sentence]) for sentence in words]
