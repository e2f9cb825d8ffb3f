"""Top-K whole-word fill-mask predictions of a Hugging Face masked language model.

Subword policy (documented in ``docs/spanish.md``): the probability of a candidate is the softmax over the
*whole* vocabulary at the mask position, never renormalised. Candidates are walked in order of probability
and only **whole-word tokens** are kept until K are found:

* WordPiece (BERT, ELECTRA, DistilBERT): a token starting with ``##`` continues a word, so it is skipped;
* byte-level BPE (RoBERTa, MarIA, BERTIN): only tokens starting with the word-start marker ``Ġ`` are kept;
* SentencePiece (ALBERT, XLM-R): only tokens starting with ``▁`` are kept;
* special tokens (``[CLS]``, ``<pad>``, the mask itself…), tokens that decode to nothing and byte-level
  pieces that decode to an incomplete UTF-8 character (``�``) are skipped.

Each kept prediction records its ``rank`` among the kept whole words (1 = most probable, as the bias
indices expect) and its ``vocab_rank`` among all vocabulary entries (also 1-based), so how many subword
pieces were skipped stays visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

WORDPIECE_CONTINUATION = "##"
BPE_WORD_START = "Ġ"
SENTENCEPIECE_WORD_START = "▁"


@dataclass(frozen=True)
class Prediction:
    """One whole-word candidate for the mask of one sentence."""

    sentence_index: int
    rank: int
    vocab_rank: int
    token_id: int
    word: str
    probability: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_masked_lm(model_id_or_path: str, revision: str | None = None, device: Any = None):
    """Load ``(model, tokenizer)`` for fill-mask; raise ``ValueError`` with a clear reason when the checkpoint
    has no trained masked-LM head or the tokenizer has no mask token.

    ``model_id_or_path`` is a Hub id (downloaded with ``revision``) or a local folder.
    """
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(model_id_or_path, revision=revision)
    except (OSError, ValueError) as err:
        raise ValueError(f"--model {model_id_or_path!r}: cannot read a model configuration ({err})") from err
    architectures = ", ".join(getattr(config, "architectures", None) or []) or config.model_type
    tokenizer = AutoTokenizer.from_pretrained(model_id_or_path, revision=revision)
    if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
        raise ValueError(
            f"--model {model_id_or_path!r}: the tokenizer has no mask token; fill-mask needs a masked language model"
        )
    try:
        model, loading_info = AutoModelForMaskedLM.from_pretrained(
            model_id_or_path, revision=revision, output_loading_info=True
        )
    except ValueError as err:
        raise ValueError(f"--model {model_id_or_path!r}: not loadable as a masked LM ({err})") from err
    missing = [key for key in loading_info.get("missing_keys", []) if key]
    if missing:
        raise ValueError(
            f"--model {model_id_or_path!r}: the masked-LM head weights are missing from the checkpoint "
            f"({', '.join(sorted(missing)[:5])}…): the checkpoint is a {architectures} without a trained masked-LM "
            "head, so predictions would come from a random head; use a *ForMaskedLM checkpoint"
        )
    model.eval()
    if device is not None:
        model.to(device)
    return model, tokenizer


def detect_uncased(tokenizer: Any) -> bool:
    """True when the tokenizer lower-cases its input (``do_lower_case`` or, failing that, a probe)."""
    for source in (getattr(tokenizer, "do_lower_case", None), getattr(tokenizer, "init_kwargs", {}).get("do_lower_case")):
        if isinstance(source, bool):
            return source
    probe_upper = tokenizer("Ella ES", add_special_tokens=False)["input_ids"]
    probe_lower = tokenizer("ella es", add_special_tokens=False)["input_ids"]
    return probe_upper == probe_lower


def word_start_convention(tokens: Sequence[str]) -> str:
    """``"bpe"`` (``Ġ`` marks a word start), ``"sentencepiece"`` (``▁``) or ``"wordpiece"`` (``##`` continues)."""
    n_bpe = sum(1 for token in tokens if token.startswith(BPE_WORD_START))
    n_sp = sum(1 for token in tokens if token.startswith(SENTENCEPIECE_WORD_START))
    n_wp = sum(1 for token in tokens if token.startswith(WORDPIECE_CONTINUATION))
    if n_bpe >= max(n_sp, n_wp) and n_bpe > 0:
        return "bpe"
    if n_sp > n_wp:
        return "sentencepiece"
    return "wordpiece"


def whole_word_mask(tokenizer: Any) -> tuple[np.ndarray, str]:
    """A boolean array over the vocabulary (True = a token that starts a whole word) and the convention used."""
    size = len(tokenizer)
    tokens = [token or "" for token in tokenizer.convert_ids_to_tokens(list(range(size)))]
    convention = word_start_convention(tokens)
    if convention == "bpe":
        keep = np.array([t.startswith(BPE_WORD_START) and len(t) > 1 for t in tokens])
    elif convention == "sentencepiece":
        keep = np.array([t.startswith(SENTENCEPIECE_WORD_START) and len(t) > 1 for t in tokens])
    else:
        keep = np.array([bool(t) and not t.startswith(WORDPIECE_CONTINUATION) for t in tokens])
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    for token_id in special:
        if 0 <= token_id < size:
            keep[token_id] = False
    return keep, convention


def top_k_whole_words(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    k: int = 10,
    batch_size: int = 16,
    device: Any = None,
    progress: bool = True,
) -> list[list[Prediction]]:
    """For every text (exactly one mask token each) the K most probable whole-word fillers.

    Probabilities are the softmax over the full vocabulary at the mask position.
    """
    import torch
    from tqdm.auto import tqdm

    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    keep, _ = whole_word_mask(tokenizer)
    if int(keep.sum()) < k:
        raise ValueError(f"the vocabulary has only {int(keep.sum())} whole-word tokens, fewer than k={k}")
    mask_id = tokenizer.mask_token_id
    device = device if device is not None else next(model.parameters()).device
    results: list[list[Prediction]] = []
    starts = range(0, len(texts), batch_size)
    for start in tqdm(starts, desc="fill-mask", disable=not progress, unit="batch"):
        batch = list(texts[start : start + batch_size])
        encoded = tokenizer(batch, return_tensors="pt", padding=True, truncation=True)
        mask_positions = encoded["input_ids"] == mask_id
        per_row = mask_positions.sum(dim=1)
        for offset, count in enumerate(per_row.tolist()):
            if count != 1:
                raise ValueError(
                    f"sentence {start + offset} ({batch[offset]!r}) has {count} mask tokens after tokenization; "
                    "exactly one is needed"
                )
        encoded = {name: tensor.to(device) for name, tensor in encoded.items()}
        with torch.no_grad():
            logits = model(**encoded).logits
        mask_logits = logits[mask_positions.to(device)]
        probabilities = torch.softmax(mask_logits.float(), dim=-1).cpu().numpy()
        for offset, row in enumerate(probabilities):
            results.append(_pick_whole_words(row, keep, k, start + offset, tokenizer))
    return results


def _pick_whole_words(row: np.ndarray, keep: np.ndarray, k: int, sentence_index: int, tokenizer: Any) -> list[Prediction]:
    order = np.argsort(-row[: len(keep)], kind="stable")
    picked: list[Prediction] = []
    for vocab_rank, token_id in enumerate(order):
        if not keep[token_id]:
            continue
        word = tokenizer.decode([int(token_id)], clean_up_tokenization_spaces=False).strip()
        if not word or "\ufffd" in word:
            # empty, or a byte-level piece that is not a complete UTF-8 character: not a whole word
            continue
        picked.append(
            Prediction(
                sentence_index=sentence_index, rank=len(picked) + 1, vocab_rank=vocab_rank + 1, token_id=int(token_id),
                word=word, probability=float(row[token_id]),
            )
        )
        if len(picked) == k:
            break
    return picked
