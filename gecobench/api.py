"""The Python front door: evaluate explainers on a model in one call, read the results as a table.

    import gecobench

    results = gecobench.evaluate(model, tokenizer, explainers=["saliency", "integrated_gradients:n_steps=16",
                                                                my_function], config="binary_all", max_sentences=64)
    results.to_pandas()        # a row per explainer: MA with interval, per-gender values, signed gaps, ...
    results.show(3)            # one sentence's word attributions as a heat map with the ground truth
    results.save("results/")   # the records the CLI writes, into a results store

    gecobench.load_results("results/").to_pandas()

:func:`evaluate` is a thin layer over the evaluation the command line runs
(:func:`gecobench.evaluation.runner.run_evaluation`): it turns its arguments into the runner's (a model object
into a :class:`~gecobench.evaluation.modelling.LoadedModel`, each explainer into an
:class:`~gecobench.explainers.base.Explainer`), runs it into a temporary results store and reads the records
back. So the numbers are those of ``gecobench evaluate`` on the same inputs; nothing is scored twice.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # only for the annotations: importing them loads torch
    import pandas as pd

    from gecobench.evaluation.modelling import LoadedModel
    from gecobench.evaluation.runner import ExplainerSpec
    from gecobench.explainers.base import Explainer

log = logging.getLogger("gecobench.api")

#: what ``explainers`` may hold (see :func:`evaluate`)
ExplainerLike = Union[str, "Explainer", type, Callable[..., Any]]


# ----------------------------------------------------------------------------------------------- results


@dataclass
class SentenceView:
    """One sentence's word attributions by every explainer of a result, with its ground truth.

    In a notebook it shows as a heat map (``_repr_html_``); printed, as text. ``html`` and ``text`` hold both."""

    sentence_id: int
    label: int
    words: list[str]
    ground_truth: list[int]
    #: one row per explainer: ``explainer``, ``attributions`` (one per word) and the sentence's ``mass_accuracy``
    rows: list[dict[str, Any]]

    @property
    def html(self) -> str:
        # the Space's drill-down heat map and its shares of the attribution mass: one definition of each
        from gecobench.gender import GENDER_GROUPS
        from gecobench.heatmap import attribution_shares, heatmap_html

        variant = GENDER_GROUPS[self.label] if 0 <= self.label < len(GENDER_GROUPS) else str(self.label)
        return heatmap_html([{**row, "words": self.words, "ground_truth": self.ground_truth, "variant": variant,
                              "chosen": True, "shares": attribution_shares(row["attributions"])}
                             for row in self.rows])

    def _repr_html_(self) -> str:
        return self.html

    @property
    def text(self) -> str:
        from gecobench.gender import GENDER_GROUPS

        group = GENDER_GROUPS[self.label] if 0 <= self.label < len(GENDER_GROUPS) else str(self.label)
        names = [str(row["explainer"]) for row in self.rows]
        width = max([len(w) for w in self.words] + [4]) + 2  # the word column, "*" marks ground truth
        columns = [max(len(n), 8) for n in names]
        lines = [(f"sentence {self.sentence_id} ({group}); * = ground-truth word; |attribution| share of the row's "
                  "largest in brackets"),
                 "word".ljust(width) + "  ".join(n.rjust(c) for n, c in zip(names, columns))]
        tops = [max((abs(a) for a in row["attributions"] if a is not None), default=0.0) or 1.0 for row in self.rows]
        for position, (word, truth) in enumerate(zip(self.words, self.ground_truth)):
            cells = []
            for row, top, width_ in zip(self.rows, tops, columns):
                value = row["attributions"][position]
                cells.append(("–" if value is None else f"{value:.2g} [{abs(value) / top:.0%}]").rjust(width_))
            lines.append(f"{'*' if truth else ' '}{word}".ljust(width) + "  ".join(cells))
        lines.append("MA".ljust(width) + "  ".join(
            ("–" if row.get("mass_accuracy") is None else f"{row['mass_accuracy']:.3f}").rjust(c)
            for row, c in zip(self.rows, columns)))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


@dataclass
class Results:
    """What :func:`evaluate` (or :func:`load_results`) returns: validated ``explainer_score`` records, with the
    per-sentence word attributions of each (the side files the runner writes) and the run's warnings."""

    #: the records, as the CLI writes them (dicts of the schema in ``docs/reference/records.md``)
    records: list[dict[str, Any]]
    #: record id → its per-sentence side document (:mod:`gecobench.evaluation.sentence_scores`)
    sentences: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: explainers that raised during the run, each described (explainer, model, config, sentence, error); their
    #: records are missing, the others' are there
    failures: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        names = ", ".join(r["explainer"]["name"] for r in self.records)
        return f"Results({len(self.records)} record{'s' if len(self.records) != 1 else ''}: {names})"

    def to_pandas(self) -> pd.DataFrame:
        """One row per record (per explainer, model and config): identity columns, then every metric's
        ``.value``, ``.ci_low`` and ``.ci_high`` (MA, log RMA when a zero-shot model was given, the property
        and faithfulness metrics present), each metric per gender group and every signed gap, as floats
        (:func:`gecobench.results_table.records_frame`)."""
        from gecobench.results_table import records_frame

        return records_frame(self.records)

    def _repr_html_(self) -> str:
        from gecobench.results_table import summary_columns

        frame = self.to_pandas()
        return frame[summary_columns(frame)]._repr_html_()

    def sentence_count(self) -> int:
        """How many scored sentences :meth:`show` can show (those of the first record with side scores)."""
        return max((len(d["sentences"]) for d in self.sentences.values()), default=0)

    def show(self, i: int = 0) -> SentenceView:
        """The ``i``-th scored sentence (0-based, in the order of the split; whole gender groups, so variants of
        one source sentence are neighbours) with every explainer's word attributions and its MA.

        Returns a :class:`SentenceView`: a heat map in a notebook, text when printed (``.html``, ``.text``)."""
        documents = [(r, self.sentences.get(r["record_id"])) for r in self.records]
        documents = [(r, d) for r, d in documents if d is not None]
        if not documents:
            raise ValueError("these results hold no per-sentence scores (no sentence passed the filter, or the "
                             "store has no sentence_scores/ side files)")
        first = documents[0][1]["sentences"]
        if not isinstance(i, int) or not -len(first) <= i < len(first):
            raise IndexError(f"sentence {i!r} out of range: {len(first)} scored sentences (0..{len(first) - 1})")
        chosen = first[i]
        key = (chosen["sentence_id"], chosen["label"])
        rows = []
        for record, document in documents:
            found = next((s for s in document["sentences"] if (s["sentence_id"], s["label"]) == key), None)
            if found is not None:
                rows.append({"explainer": record["explainer"]["name"], "attributions": found["attributions"],
                             "mass_accuracy": found.get("mass_accuracy")})
        return SentenceView(int(chosen["sentence_id"]), int(chosen["label"]), list(chosen["words"]),
                            [int(g) for g in chosen["ground_truth"]], rows)

    def save(self, path: str | os.PathLike[str]) -> list[str]:
        """Append the records (and their per-sentence side files) to the results store at ``path`` (a folder, or
        ``hf://<dataset repo>``), validated as every store write is; a record already there is kept, not
        written twice. Returns the ids written."""
        from gecobench.evaluation.sentence_scores import write_sentence_scores
        from gecobench.store import open_results_store

        store = open_results_store(str(path))
        written = []
        for record in self.records:
            if store.exists("explainer_score", record["record_id"]):
                continue
            store.append(record)
            written.append(record["record_id"])
            if record["record_id"] in self.sentences:
                write_sentence_scores(store, self.sentences[record["record_id"]])
        return written


def load_results(store_path: str | os.PathLike[str]) -> Results:
    """The ``explainer_score`` records of a local results store folder (as :func:`evaluate`, the CLI or
    :meth:`Results.save` wrote them), validated on read (invalid files are skipped and listed in
    ``Results.warnings``), with their per-sentence side files where present."""
    from gecobench.evaluation.sentence_scores import (
        find_side_file,
        read_sentence_scores,
    )
    from gecobench.store import LocalStore

    root = Path(store_path)
    if not root.is_dir():
        raise FileNotFoundError(f"results store {root} not found (a folder holding explainer_score/)")
    store = LocalStore(root)
    report = store.read_all("explainer_score")
    records = sorted(report.documents, key=lambda r: r["record_id"])
    sentences, warnings = {}, list(report.warnings)
    folders = store.folders()  # the parts file read once, not once per record
    for record in records:
        path = find_side_file(root, record["record_id"], folders)
        if path is not None:
            try:
                sentences[record["record_id"]] = read_sentence_scores(path)
            except ValueError as err:
                warnings.append(str(err))
    return Results(records, sentences, warnings)


# ----------------------------------------------------------------------------------------------- inputs


def _spec_and_explainer(item: ExplainerLike, precision: str = "float32") -> tuple[ExplainerSpec, Explainer]:
    """One entry of ``explainers`` as the runner's spec and instance, or a clear error naming what is wrong;
    ``precision`` is set on a built-in named by text that runs the model (:func:`~gecobench.evaluation.settings.
    with_precision`)."""
    from gecobench.evaluation.runner import ExplainerSpec
    from gecobench.evaluation.settings import with_precision
    from gecobench.explainers.adapters import (
        CaptumExplainer,
        FunctionExplainer,
        is_captum_attribution_class,
    )
    from gecobench.explainers.base import Explainer, get_explainer

    if isinstance(item, str):
        try:
            (spec,) = with_precision([ExplainerSpec.parse(item)], precision)
            return spec, get_explainer(spec.name, **spec.params)
        except KeyError as err:  # an unknown name: the registry's message lists the known ones
            raise ValueError(err.args[0]) from None
    if isinstance(item, Explainer):
        explainer = item
    elif is_captum_attribution_class(item):
        explainer = CaptumExplainer(item)
    elif isinstance(item, type) and issubclass(item, Explainer):
        explainer = item()
    elif callable(item):
        explainer = FunctionExplainer(item)
    else:
        raise TypeError(f"explainer {item!r}: expected a built-in name ('saliency', 'integrated_gradients:n_steps=16'),"
                        f" an Explainer, a function (model, tokenizer, words, targets) -> word scores, or a Captum "
                        f"attribution class; got {type(item).__name__}")
    return ExplainerSpec(explainer.name, explainer.params()), explainer


def _load_tokenizer(source: str, what: str) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{what}: no tokenizer given and none could be loaded from {source!r} ({err}); pass "
                         "tokenizer=...") from None


def _resolve_folder(model: str) -> Path:
    """A local folder, or a Hub model id downloaded through the Hub client (``huggingface_hub.snapshot_download``,
    which reads the local cache when offline)."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder
    if folder.exists() or model.count("/") > 1 or not model.strip():
        raise FileNotFoundError(f"model {model!r}: not a folder, and not a Hub id (owner/name)")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model))
    except Exception as err:  # noqa: BLE001 - the Hub client's errors (offline, not found, gated) have no common base
        raise FileNotFoundError(f"model {model!r}: no such local folder, and the Hub could not give it "
                                f"({type(err).__name__}: {err})") from None


def _loaded_model(model: Any, tokenizer: Any, info: Mapping[str, Any] | None) -> LoadedModel:
    """``model`` (an object, a zoo checkpoint folder, a transformers model folder or a Hub id) as a LoadedModel."""
    from gecobench.evaluation.modelling import (
        LoadedModel,
        load_model,
        loaded_from_objects,
    )

    if isinstance(model, LoadedModel):
        return model
    if isinstance(model, (str, os.PathLike)):
        folder = _resolve_folder(os.fspath(model))
        if (folder / "gecobench_model.json").is_file():
            if tokenizer is not None:
                raise ValueError(f"model {model}: a zoo checkpoint folder brings its own tokenizer; leave tokenizer "
                                 "unset (it is for a model object)")
            return load_model(folder)  # what the command line loads
        from transformers import AutoModelForSequenceClassification

        try:
            loaded = AutoModelForSequenceClassification.from_pretrained(folder)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"model {model}: not a zoo checkpoint (no gecobench_model.json) and not a transformers "
                             f"sequence classifier ({type(err).__name__}: {err})") from None
        return loaded_from_objects(loaded, tokenizer if tokenizer is not None
                                   else _load_tokenizer(str(folder), f"model {model}"), dict(info or {}),
                                   name=Path(os.fspath(model)).name)
    if tokenizer is None:
        source = getattr(getattr(model, "config", None), "_name_or_path", None)
        if not source:
            raise ValueError(f"{type(model).__name__}: pass tokenizer=... (the model names no pretrained source)")
        tokenizer = _load_tokenizer(source, type(model).__name__)
    return loaded_from_objects(model, tokenizer, dict(info or {}))


def _canonical(params: Mapping[str, Any]) -> str:
    import json

    return json.dumps(params, sort_keys=True, default=str)


def _probe(explainers: Sequence[Explainer], lm: LoadedModel, config: str, split: str, data_dir: str | None) -> None:
    """Run every explainer that is not a registered built-in on one sentence before the evaluation, so a function
    that returns the wrong number of scores fails at once, with the engine's message, instead of mid-run."""
    from gecobench.evaluation.attribution import attribute_words
    from gecobench.evaluation.data import load_split, scorable
    from gecobench.explainers.base import _REGISTRY, Explainer

    untried = [e for e in explainers if type(e) not in _REGISTRY.values() and type(e).fit is Explainer.fit]
    if not untried:
        return
    row = next(r for r in load_split(config, split, data_dir).rows if scorable(r))
    for explainer in untried:
        attribute_words(explainer, lm.model, lm.tokenizer, [list(row.words)], [row.label], batch_size=1)


def evaluate(
    model: Any,
    tokenizer: Any = None,
    explainers: Sequence[ExplainerLike] = ("saliency",),
    config: str | Sequence[str] = "binary_all",
    max_sentences: int | None = None,
    filter: str = "paper",  # gecobench.evaluation.filters.DEFAULT_FILTER (not imported here: it loads torch)
    zero_shot: Any = None,
    data_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    progress: bool = True,
    *,
    split: str = "test",
    properties: bool = True,
    faithfulness: bool = True,
    bootstrap: int = 1000,
    batch_size: int = 8,
    chunk_size: int = 16,
    model_info: Mapping[str, Any] | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    filter_subset: Any = None,
    reference_attributions: Any = None,
    precision: str = "float32",
) -> Results:
    """Score explainers on one model over GECO, as ``gecobench evaluate`` does, and return the records.

    Args:
        model: a transformers sequence classifier object (``...ForSequenceClassification``: called on
            ``input_ids`` and ``attention_mask`` it returns ``logits`` of shape ``(batch, num_labels)``), a zoo
            checkpoint folder (loaded as the CLI loads it), a transformers model folder, or a Hub model id
            (downloaded with ``huggingface_hub``; offline, only what its cache holds).
        tokenizer: the model object's tokenizer (default: loaded from the model's ``name_or_path``). Not for a
            zoo folder, which brings its own.
        explainers: each one of
            a built-in name with parameters as the CLI takes them (``"integrated_gradients:n_steps=16"``;
            unknown names and parameters are refused, listing the known ones);
            an :class:`~gecobench.explainers.base.Explainer` instance (or class, built without arguments);
            a plain function ``(model, tokenizer, words, targets) -> word scores`` with the signature of
            :meth:`Explainer.explain <gecobench.explainers.base.Explainer.explain>` (a batch of sentences in, one
            score array per sentence out; :class:`~gecobench.explainers.adapters.FunctionExplainer`);
            a Captum attribution class such as ``captum.attr.Saliency``, run at the built-ins' attribution point
            and folded to words as they are (:class:`~gecobench.explainers.adapters.CaptumExplainer`).
        config: a GECO config (``binary_all``, ``binary_subject``, ``nonbinary_all``, ``nonbinary_subject``) or a
            list of them.
        max_sentences: score only the first N *source* sentences of the split, each with all its gender variants
            (the CLI's ``--max-groups``); None: all of them.
        filter: the correctness filter, ``paper`` (default: the sentences whose every gender variant the model
            classifies correctly, shared by all models; with one model, its own), ``per_model`` or ``none``.
        zero_shot: the zero-shot model of the model's base, the reference of log RMA: a zoo ``ZS`` checkpoint
            folder, or a model object (with ``tokenizer``'s tokenizer). Without it, RMA is reported as undefined
            with the reason (for a zoo folder, a ``ZS`` checkpoint next to it is used, as the CLI does).
        data_dir: a folder with the GECO release files (default: the package's default, see ``docs/data.md``).
        seed: the seed of the explainers' randomness and of the bootstrap.
        progress: show progress bars.
        split: the GECO split explained (``test``).
        properties: compute the property and ranking metrics (MRC, SNC, LD, DMA, SP, CVR, RRA, AUPRC).
        faithfulness: compute comprehensiveness, sufficiency and leave-one-out tau.
        bootstrap: bootstrap resamples of the 95 % intervals (0: none).
        batch_size: sentences per explainer call.
        chunk_size: source sentences per checkpointed chunk. These six are
            :class:`~gecobench.evaluation.runner.EvaluationSettings` fields, the CLI's options of the same names.
        model_info: facts recorded about a model object (``regime``, ``base_model``, ``seed``, ...; default
            regime ``user`` and the config's ``_name_or_path``).
        checkpoint_dir: keep the per-chunk checkpoints here, so a rerun resumes; default: a temporary folder,
            deleted afterwards.
        filter_subset: the ``paper`` filter's shared subset (a file, folder or FilterSubset), as the CLI's
            ``--filter-subset``.
        reference_attributions: published zero-shot reference attributions, as the CLI's
            ``--reference-attributions``.
        precision: ``bfloat16`` runs every built-in named by text that runs the model in mixed precision (its
            ``precision`` parameter, recorded), as the CLI's ``--precision``; default ``float32``.

    Returns:
        :class:`Results`: ``records`` (one per explainer and config), ``to_pandas()``, ``show(i)``, ``save(path)``.

    Raises:
        ValueError / TypeError: a bad input, named: an unknown explainer or parameter, an explainer given twice,
            a function returning the wrong number of scores (found on one sentence before the run), a model that is
            not a sequence classifier, a zero-shot model that is not zero-shot.
    """
    from gecobench.evaluation.filters import PAPER, reference_subsets_for_models
    from gecobench.evaluation.modelling import LoadedModel, loaded_from_objects
    from gecobench.evaluation.runner import EvaluationSettings, run_evaluation

    configs = [config] if isinstance(config, str) else list(config)
    if not configs:
        raise ValueError("config: give at least one GECO config")
    if isinstance(explainers, (str, bytes)) or callable(explainers):
        explainers = [explainers]
    pairs = [_spec_and_explainer(e, precision) for e in explainers]
    if not pairs:
        raise ValueError("explainers: give at least one")
    seen: dict[str, str] = {}
    for spec, _ in pairs:
        if spec.key() in seen:
            raise ValueError(f"explainer {spec.name!r} with parameters {spec.params} is given twice")
        seen[spec.key()] = spec.name
    settings = EvaluationSettings(split=split, seed=seed, filter=filter, properties=properties, bootstrap=bootstrap,
                                  batch_size=batch_size, chunk_size=chunk_size, max_groups=max_sentences,
                                  data_dir=os.fspath(data_dir) if data_dir is not None else None,
                                  faithfulness=faithfulness)
    if max_sentences is not None and (isinstance(max_sentences, bool) or int(max_sentences) < 1):
        raise ValueError(f"max_sentences must be a positive number of source sentences, got {max_sentences!r}")

    lm = _loaded_model(model, tokenizer, model_info)
    reference: str | LoadedModel | None = None
    if zero_shot is not None:
        if isinstance(zero_shot, (str, os.PathLike)):
            reference = os.fspath(zero_shot)
        else:  # a model object: the zero-shot model of this model's base, sharing its tokenizer
            reference = loaded_from_objects(zero_shot, lm.tokenizer, {"regime": "ZS", "base_model": lm.base_model},
                                            name="zero-shot reference")
    subsets = filter_subset
    if subsets is None and settings.filter == PAPER and Path(lm.path).is_dir():
        # as the CLI: the committed reference's shared subset when the model is one of the reference's checkpoints
        found = reference_subsets_for_models([lm.path])
        subsets = found if found and set(configs) <= set(found) else None

    objects = [m.model for m in (lm, reference) if isinstance(m, LoadedModel)]
    modes = [m.training for m in objects]
    for module in objects:
        module.eval()  # predictions and attributions without dropout; the caller's mode is restored below
    try:
        _probe([e for _, e in pairs], lm, configs[0], split, settings.data_dir)
        with tempfile.TemporaryDirectory(prefix="gecobench-evaluate-") as scratch:
            store_dir = Path(scratch) / "store"
            summary = run_evaluation(
                [spec for spec, _ in pairs], [lm], configs, settings, store_location=str(store_dir),
                checkpoint_dir=Path(checkpoint_dir) if checkpoint_dir is not None else Path(scratch) / "checkpoints",
                progress=progress, instances=[e for _, e in pairs], filters=(settings.filter,),
                reference_attributions=reference_attributions, zero_shot=reference, filter_subsets=subsets)
            results = load_results(store_dir) if store_dir.is_dir() else Results([])
        # in the order asked for (configs, then explainers), not the store's (record ids)
        wanted = {(explainer.name, _canonical(explainer.params())): i for i, (_, explainer) in enumerate(pairs)}
        results.records.sort(key=lambda r: (configs.index(r["dataset"]["config"]) if r["dataset"]["config"] in configs
                                            else len(configs),
                                            wanted.get((r["explainer"]["name"], _canonical(r["explainer"]["params"])),
                                                       len(wanted))))
    finally:
        for module, mode in zip(objects, modes):
            module.train(mode)
    # explainers that raised mid-run (the evaluation reports them and writes the others' records)
    results.failures = [f.describe() if hasattr(f, "describe") else str(f) for f in getattr(summary, "failures", [])]
    for failure in results.failures:
        log.warning("%s", failure)
    results.warnings = list(summary.warnings) + results.warnings
    return results


__all__ = ["Results", "SentenceView", "evaluate", "load_results"]

