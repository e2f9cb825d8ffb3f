"""Tiny randomly initialised masked LMs built in-test for the Spanish pipeline tests (saved to a folder)."""

from __future__ import annotations

from pathlib import Path

SPANISH_WORDS = [
    "él", "ella", "es", "el", "la", "chico", "chica", "padre", "madre", "mi", "persona", "una", "muy", "se",
    "considera", "parece", "ser", "más", "simpático", "simpática", "alto", "alta", "guapo", "guapa", "inteligente",
    "amable", "fuerte", "débil", "bueno", "buena", "casa", "perro",
]
WORDPIECE_PIECES = ["##s", "##mente", "##ito", "##ita"]
BPE_CORPUS = [
    "Él es simpático.", "Ella es simpática.", "El chico es alto.", "La chica es alta.", "El padre es guapo.",
    "La madre es guapa.", "Mi abuelo es inteligente.", "Mi abuela es amable.", "Es una persona fuerte.",
    "Él se considera muy bueno.", "Ella parece ser buena.", "El perro es débil.", "La casa es más grande.",
]


def make_tiny_bert_mlm(folder: Path, seed: int = 0, do_lower_case: bool = True) -> Path:
    """A 1-layer BertForMaskedLM with an in-test WordPiece vocabulary holding some Spanish adjectives."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + SPANISH_WORDS + WORDPIECE_PIECES
    tokenizer = BertTokenizerFast(
        vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=do_lower_case, strip_accents=False
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64,
    )
    model = BertForMaskedLM(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def make_tiny_roberta_mlm(folder: Path, seed: int = 0) -> Path:
    """A 1-layer RobertaForMaskedLM with a byte-level BPE tokenizer trained in-test on a few Spanish sentences."""
    import torch
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        BPE_CORPUS, vocab_size=400, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )
    bpe.save_model(str(folder))
    import json

    merges = [
        tuple(line.split(" ")) for line in (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    # as in the published RoBERTa tokenizers, <mask> absorbs the space before it, so the model predicts "Ġword"
    tokenizer = RobertaTokenizerFast(vocab=vocab, merges=merges, mask_token=AddedToken("<mask>", lstrip=True))
    torch.manual_seed(seed)
    config = RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=80, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    model = RobertaForMaskedLM(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
