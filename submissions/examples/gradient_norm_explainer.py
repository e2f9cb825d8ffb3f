"""An example submission: the L2 norm of the gradient at each token's word embedding.

Write it next to you with ``gecobench submit example my_explainer.py``, then submit it with::

    gecobench submit code my_explainer.py \
        --name gradient_norm --version 1.0.0 --authors "Your Name" \
        --description "L2 norm of the target logit's gradient at each word embedding" \
        --license MIT --contact you@example.org

The contract: a class with a ``name``, a ``version`` and ``explain(model, tokenizer, words, targets)`` that
returns one score per word (here: per token, with ``word_ids``, folded to words by the hub's shared rule).
It never sees ground truth.
"""

from __future__ import annotations

import torch

from gecobench.explainers import Explainer, TokenAttributions
from gecobench.words import tokenize_words


class GradientNormExplainer(Explainer):
    name = "gradient_norm"
    version = "1.0.0"
    description = "L2 norm of the gradient of the target logit at each word embedding"

    def explain(self, model, tokenizer, words, targets):
        encoding, word_ids = tokenize_words(tokenizer, words)
        embeddings = model.get_input_embeddings()(encoding["input_ids"]).detach().requires_grad_(True)
        extra = {k: v for k, v in encoding.items() if k in ("attention_mask", "token_type_ids")}
        logits = model(inputs_embeds=embeddings, **extra).logits
        chosen = logits.gather(1, torch.as_tensor(list(targets)).view(-1, 1)).sum()
        (gradient,) = torch.autograd.grad(chosen, embeddings)
        norms = gradient.norm(dim=-1).detach().cpu().numpy()
        return [TokenAttributions(scores=norms[i], word_ids=word_ids[i]) for i in range(len(words))]
