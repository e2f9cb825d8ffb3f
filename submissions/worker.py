"""The queue worker: PENDING requests → RUNNING → FINISHED (records written) | FAILED (reason + log excerpt).

Both tracks end in the evaluation runner, the same path as built-in explainers:

* **code** — the submitted file runs in the sandbox (:mod:`submissions.sandbox`) once per (model, config),
  on the test sentences' words and target classes only; its scores (the model's, a re-initialised copy's for
  the model-randomisation check, and the other property inputs) come back, are validated, and are scored by
  :func:`gecobench.evaluation.runner.run_evaluation` through a
  :class:`~gecobench.evaluation.precomputed.PrecomputedExplainer`;
* **precomputed** — the file must cover every (model, config, test sentence) of the model set; it is scored
  the same way and labelled ``self-reported`` (the GECO ground truth is public).

A request that fails for any reason ends FAILED with a human-readable reason; the worker goes on with the
next one, and no other request or result changes.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import random
import re
import secrets
import shutil
import socket
import tempfile
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gecobench.domain import MODEL_INFO_FILE
from submissions.requests import RequestStore, RequestView, TransitionError
from submissions.sandbox import (
    SandboxLimits,
    SandboxUnavailable,
    redact,
    run_submission,
    sandbox_status,
)
from submissions.validation import iter_precomputed_rows

log = logging.getLogger("gecobench.submissions")

# A submission whose attributions barely change when the model is re-initialised (mean MRC, a total-variation
# distance in [0, 1], below this) is recorded as model-independent, whatever it declares: it cannot be
# explaining the model (a constant, or a ground-truth guess). Built-in gradient methods score far above it.
MODEL_INDEPENDENT_MRC = 0.01


@dataclass
class WorkerConfig:
    """What the worker evaluates submissions on, and where it writes."""

    model_paths: list[str]
    configs: list[str] = field(default_factory=lambda: ["binary_all"])
    results_location: str | None = None
    data_dir: str | None = None
    settings: Any = None  # gecobench.evaluation.runner.EvaluationSettings
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    checkpoint_dir: str = "runs/submission_checkpoints"
    # The hub's private folder of hidden control models (gecobench.controls; ``controls.json`` and checkpoints,
    # never published). Default: $GECOBENCH_CONTROL_DIR; None or empty: no control runs.
    control_dir: str | None = field(default_factory=lambda: os.environ.get("GECOBENCH_CONTROL_DIR") or None)
    # Only for local testing: run code submissions without bubblewrap (rlimits and the audit hook only).
    unsafe_no_sandbox: bool = False
    # How long a RUNNING claim holds before another worker may recover it (default: from the limits).
    lease_seconds: float | None = None
    # The paper's filter scores a submission on the reference's shared subset of each config: a subset file, a
    # folder of them or a reference folder (gecobench.evaluation.filters.load_filter_subsets). Default: the
    # committed reference's subsets when the model set is the reference's, else one computed from the model set.
    filter_subsets: Any = None
    # Where each model's zero-shot (ZS) reference of RMA comes from (see :func:`zero_shot_reference_for`). None:
    # found as the evaluation finds it (the model set, next to the model, the zoo layout's <config>/ZS/seed*). A ZS
    # checkpoint folder: that one, for the models of its base. Either way the submission itself is run on it in
    # the sandbox, like any model: a submission's MA_ZS is its own explainer's on the ZS model.
    zero_shot: str | None = None
    # A published reference (a bundle, a folder of bundles, a reference dataset folder or its Hub id:
    # gecobench.evaluation.published_reference) naming the ZS model each (config, base) must be compared with:
    # the ZS checkpoint found must compute the same function (fingerprint), else the request fails. Its
    # attributions are never used: they are the built-ins' on the ZS model, not the submission's.
    published_reference: str | None = None
    _subsets: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _data_fingerprints: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False, compare=False)
    _published: Any = field(default=None, repr=False, compare=False)

    def model_ids(self) -> dict[str, str]:
        """Each model's id (:func:`model_id`) → its path; :class:`ModelSetError` when two paths share an id."""
        return model_ids(self.model_paths)

    def model_set_name(self) -> str:
        return ",".join(sorted(self.model_ids()))

    def lease(self) -> float:
        """Seconds a claim holds: every sandbox run of a request at its wall-clock limit, plus scoring."""
        if self.lease_seconds is not None:
            return self.lease_seconds
        return 2 * self.limits.wall_seconds * max(len(self.model_paths) * len(self.configs), 1) * 4 + 3600


#: what a part of a model id read from a checkpoint's metadata may hold (it must not name another folder)
_ID_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", re.ASCII)


def model_id(path: str | os.PathLike[str]) -> str:
    """The name a model has in a model set, in precomputed files (their ``model`` field) and in the worker's
    messages: ``<geco_config>/<regime>/seed<seed>`` from the checkpoint's own ``gecobench_model.json`` (the
    reference zoo's layout ``zoo/<config>/<regime>/seed<k>``, and the name a published zero-shot bundle gives its
    model), so that it does not depend on where the worker keeps the checkpoint; the folder's name when the
    checkpoint has no such metadata. Every zoo checkpoint's folder is called ``seed<k>``: the folder name alone
    would give every model of a zoo the same id."""
    folder = Path(path).resolve()
    try:
        info = json.loads((folder / MODEL_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return folder.name
    if isinstance(info, dict):
        config, regime, seed = info.get("geco_config"), info.get("regime"), info.get("seed")
        if (isinstance(config, str) and _ID_PART.fullmatch(config) and isinstance(regime, str)
                and _ID_PART.fullmatch(regime) and isinstance(seed, int) and not isinstance(seed, bool)):
            return f"{config}/{regime}/seed{seed}"
    return folder.name


class ModelSetError(ValueError):
    """Two checkpoints of the worker's model set (or a model and its zero-shot reference) have one id: a
    precomputed file's rows, the records and the worker's messages could not tell them apart."""


def model_ids(paths: list[str] | tuple[str, ...]) -> dict[str, str]:
    """:func:`model_id` → path for a model set (a path listed twice is one model). Raises :class:`ModelSetError`,
    naming both paths, when two checkpoints get one id."""
    ids: dict[str, str] = {}
    for path in paths:
        name = model_id(path)
        other = ids.setdefault(name, str(path))
        if Path(other).resolve() != Path(path).resolve():
            raise ModelSetError(
                f"models {other} and {path} of the model set have the same id {name!r} (<config>/<regime>/seed<k> "
                "from their gecobench_model.json, else the folder name): precomputed files, records and messages "
                "could not tell them apart; keep one of them in the model set (--models)")
    return ids


def reference_model_id(config: WorkerConfig, reference_path: str | os.PathLike[str]) -> str:
    """The id of a zero-shot reference checkpoint (a precomputed file's rows for it carry that id). Raises
    :class:`ModelSetError` when it is the id of another checkpoint of the model set."""
    name = model_id(reference_path)
    member = config.model_ids().get(name)
    if member is not None and Path(member).resolve() != Path(reference_path).resolve():
        raise ModelSetError(
            f"the zero-shot reference {reference_path} has the id {name!r} of model {member} of the set, but is "
            "another checkpoint: a precomputed file's rows for that id could be either; put the reference itself "
            "in the model set, or drop the other")
    return name


def _settings(config: WorkerConfig):
    from gecobench.evaluation.runner import EvaluationSettings

    return config.settings or EvaluationSettings(data_dir=config.data_dir)


def _groups_to_explain(config: WorkerConfig, geco_config: str):
    """The test sentence groups (gender variants of one source sentence) to explain, and the training rows."""
    from gecobench.evaluation.data import load_split, scorable

    settings = _settings(config)
    split = load_split(geco_config, settings.split, config.data_dir)
    groups = split.groups[: settings.max_groups] if settings.max_groups else split.groups
    row_groups = [[split.rows[i] for i in group if scorable(split.rows[i])] for group in groups]
    train = load_split(geco_config, "train", config.data_dir)
    train_rows = [r for r in train.rows if scorable(r)]
    return [g for g in row_groups if g], train_rows


def _rows_to_explain(config: WorkerConfig, geco_config: str):
    groups, train_rows = _groups_to_explain(config, geco_config)
    return [row for group in groups for row in group], train_rows


def one_variant_per_run(groups: list[list[Any]], rng: random.Random) -> list[list[Any]]:
    """Split sentence groups into runs that each hold at most one gender variant of every source sentence.

    A run that saw two variants of one sentence could diff them and find the ground truth (the gendered
    words are exactly where variants differ). Which variant goes to which run is drawn at random, and each
    run's order is shuffled, so neither position nor run tells the explainer a variant's gender.
    """
    runs: list[list[Any]] = []
    for group in groups:
        members = list(group)
        rng.shuffle(members)
        for position, row in enumerate(members):
            while len(runs) <= position:
                runs.append([])
            runs[position].append(row)
    for run in runs:
        rng.shuffle(run)
    return runs


def filter_subset_for(config: WorkerConfig, geco_config: str):
    """The shared subset a submission's ``paper`` records of ``geco_config`` score (None for the other filters):
    the given one, else the committed reference's when the model set is the reference's, else the one every
    model of the worker's set defines. One per config, so every model of the set scores the same sentences
    (the worker scores one model at a time)."""
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.filters import PAPER, load_filter_subsets, reference_subsets_for_models
    from gecobench.evaluation.runner import compute_paper_subset

    settings = _settings(config)
    if settings.filter != PAPER:
        return None
    if geco_config not in config._subsets:
        given = (load_filter_subsets(config.filter_subsets) if config.filter_subsets is not None
                 else reference_subsets_for_models(config.model_paths))
        subset = given.get(geco_config)
        if subset is None:
            split = load_split(geco_config, settings.split, settings.data_dir or config.data_dir)
            subset = compute_paper_subset(config.model_paths, split, settings)
        config._subsets[geco_config] = subset
    return config._subsets[geco_config]


class ZeroShotReferenceError(ValueError):
    """The worker's zero-shot reference setting cannot give a model its RMA reference: it is missing, not a ZS
    checkpoint, of another base, or not the model the published reference names."""


def _published_references(config: WorkerConfig):
    from gecobench.evaluation.published_reference import load_published_references

    if config._published is None:
        try:
            config._published = load_published_references(config.published_reference)
        except (OSError, ValueError) as err:
            raise ZeroShotReferenceError(f"published zero-shot reference {config.published_reference!r}: {err}"
                                         ) from None
    return config._published


#: resolved checkpoint folder → (its files' names, sizes and modification times, its checkpoint_fingerprints):
#: the zero-shot reference is checked against a published one for every (config, model) at start and again in
#: every request, and hashing its weights is the whole cost of that check
_FINGERPRINTS: dict[str, tuple[tuple[tuple[str, int, int], ...], tuple[str, str]]] = {}


def _checkpoint_fingerprints(path: str | os.PathLike[str]) -> tuple[str, str]:
    """:func:`gecobench.provenance.checkpoint_fingerprints` of a checkpoint folder, computed once per worker process
    while none of its files changes (name, size or modification time)."""
    from gecobench.provenance import checkpoint_fingerprints

    root = Path(path).resolve()
    stamp = tuple(sorted((str(f.relative_to(root)), st.st_size, st.st_mtime_ns)
                         for f in root.rglob("*") if f.is_file() for st in (f.stat(),)))
    cached = _FINGERPRINTS.get(str(root))
    if cached is None or cached[0] != stamp:
        cached = _FINGERPRINTS[str(root)] = (stamp, checkpoint_fingerprints(path))
    return cached[1]


def _data_fingerprint(config: WorkerConfig, geco_config: str) -> tuple[str, str]:
    """(split, fingerprint) of the GECO split the worker scores on ``geco_config`` (read once per config)."""
    from gecobench.evaluation.data import load_split

    if geco_config not in config._data_fingerprints:
        settings = _settings(config)
        split = load_split(geco_config, settings.split, settings.data_dir or config.data_dir)
        config._data_fingerprints[geco_config] = (split.split, split.fingerprint)
    return config._data_fingerprints[geco_config]


def zero_shot_reference_for(config: WorkerConfig, model_path: str | os.PathLike[str], geco_config: str
                            ) -> tuple[str | None, str | None]:
    """The zero-shot checkpoint the submission is also run on for ``model_path``'s RMA on ``geco_config``, and
    why there is none (a ZS or OLA model has no reference by definition; without a setting, none was found: the
    record then says RMA was not computed, as a built-in's does).

    ``config.zero_shot`` (a ZS checkpoint folder) comes first, then the model set and the checkpoints next to the
    model. With ``config.published_reference`` the reference is required, and its function fingerprint
    (:func:`gecobench.provenance.checkpoint_fingerprints`: weights, config and tokenizer) must be that of a ZS
    model the published reference names for ``geco_config`` and the model's base, in a bundle made on the GECO
    data the worker scores (the split's fingerprint: a bundle of another release of the data compares with other
    sentences). Raises :class:`ZeroShotReferenceError` otherwise, naming what was expected and what was found."""
    from gecobench.evaluation.filters import ZERO_SHOT_REGIME
    from gecobench.evaluation.modelling import LoadedModel
    from gecobench.evaluation.zero_shot import check_zero_shot, find_zero_shot_reference
    from gecobench.models import read_model_info

    # Only the checkpoint's facts are needed to find its zero-shot reference, not its weights.
    facts = LoadedModel(model=None, tokenizer=None, info=read_model_info(model_path), path=str(model_path))
    candidates = [str(p) for p in config.model_paths]
    if config.zero_shot:
        try:
            check_zero_shot(config.zero_shot)
        except (OSError, ValueError) as err:
            raise ZeroShotReferenceError(str(err)) from None
        given_base = read_model_info(config.zero_shot).get("base_model")
        if (facts.regime not in (ZERO_SHOT_REGIME, "OLA") and given_base != facts.base_model
                and not any(read_model_info(p).get("base_model") == given_base for p in config.model_paths)):
            raise ZeroShotReferenceError(
                f"zero-shot reference {config.zero_shot} is of base {given_base!r}; no model of the set has that "
                f"base (model {model_id(model_path)} is of base {facts.base_model!r})")
        candidates.insert(0, str(config.zero_shot))
    reference, reason = find_zero_shot_reference(facts, candidates)
    if not config.published_reference or facts.regime in (ZERO_SHOT_REGIME, "OLA"):
        return (None if reference is None else str(reference)), reason
    published = _published_references(config)
    of_base = [b for b in published.by_unit.values()
               if b.document["dataset"].get("config") == geco_config
               and b.document["reference"].get("base_model") == facts.base_model]
    where = f"published zero-shot reference {config.published_reference}"
    if not of_base:
        bases = sorted({f"{b.document['dataset'].get('config')}: {b.document['reference'].get('base_model')}"
                        for b in published.by_unit.values()})
        raise ZeroShotReferenceError(
            f"{where} names no zero-shot model of base {facts.base_model!r} on {geco_config} (model "
            f"{model_id(model_path)}); it names {', '.join(bases) or 'none'}")
    split, fingerprint = _data_fingerprint(config, geco_config)
    named = [b.document["reference"] for b in of_base
             if b.document["dataset"]["fingerprint"] == fingerprint]
    if not named:
        made_on = ", ".join(sorted({f"{b.document['dataset'].get('split')} split of fingerprint "
                                    f"{str(b.document['dataset'].get('fingerprint'))[:16]} ({b.path.name})"
                                    for b in of_base}))
        raise ZeroShotReferenceError(
            f"{where} was made on other GECO data than the worker scores: its zero-shot model of base "
            f"{facts.base_model!r} on {geco_config} was published for the {made_on}, the worker scores the {split} "
            f"split of fingerprint {fingerprint[:16]} (model {model_id(model_path)}); point the worker at the data "
            "the reference was made on (--data-dir), or at a reference made on this data")
    expected = ", ".join(sorted({f"{r.get('name')} (function sha256 {str(r.get('function_sha256'))[:16]})"
                                 for r in named}))
    if reference is None:
        raise ZeroShotReferenceError(
            f"{where} compares {geco_config} models of base {facts.base_model!r} with {expected}, but the worker has "
            f"no zero-shot checkpoint of that base for model {model_id(model_path)} ({reason}); the submission must "
            "be run on it: pass its folder (--zero-shot-reference), or put it in the model set or the zoo layout")
    _, function_sha256 = _checkpoint_fingerprints(reference)
    if function_sha256 not in {r.get("function_sha256") for r in named}:
        raise ZeroShotReferenceError(
            f"zero-shot checkpoint {reference} (function sha256 {function_sha256[:16]}) does not match {where}: it "
            f"compares {geco_config} models of base {facts.base_model!r} with {expected}")
    return str(reference), None


def _score(config: WorkerConfig, explainer, model_path: str, geco_config: str,
           zero_shot: str | None = None) -> list[str]:
    from gecobench.evaluation.runner import ExplainerSpec, run_evaluation

    subset = filter_subset_for(config, geco_config)
    summary = run_evaluation(
        [ExplainerSpec(explainer.name, explainer.params())], [model_path], [geco_config], settings=_settings(config),
        store_location=config.results_location, checkpoint_dir=config.checkpoint_dir, progress=False,
        instances=[explainer], filter_subsets={geco_config: subset} if subset is not None else None,
        # the reference the submission was run on, so the record names the model its RMA compares with (the
        # runner alone would look next to the model only, and could find another ZS checkpoint, or none)
        zero_shot=zero_shot,
    )
    return summary.written + summary.existing


def check_zero_shot_references(config: WorkerConfig) -> list[str]:
    """Resolve every (config, model)'s zero-shot reference before any request is claimed; returns one line per
    model. Raises :class:`ZeroShotReferenceError`, or :class:`ModelSetError` when two models (or a model and a
    zero-shot reference) share an id (the worker's CLI then refuses to start)."""
    config.model_ids()
    lines = []
    for geco_config in config.configs:
        for model_path in config.model_paths:
            try:
                reference, reason = zero_shot_reference_for(config, model_path, geco_config)
            except (FileNotFoundError, ValueError) as err:  # not a checkpoint folder, or an unreadable one
                raise ZeroShotReferenceError(f"model {model_path}: {err}") from err
            if reference:
                reference_model_id(config, reference)
            lines.append(f"{geco_config} {model_id(model_path)}: "
                         + (f"zero-shot reference {reference}" if reference else f"no RMA ({reason})"))
    return lines


def mean_model_randomisation_check(main: dict[Any, list[float]], randomised: dict[Any, list[float]]) -> float | None:
    """The mean MRC over rows (None when undefined everywhere): how much attributions change on a random model."""
    import numpy as np

    from gecobench.metrics.properties import model_randomisation_check_per_sentence

    keys = [k for k in main if k in randomised]
    if not keys:
        return None
    values = model_randomisation_check_per_sentence([main[k] for k in keys], [randomised[k] for k in keys])
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else None


def save_randomised_checkpoint(model_path: str | os.PathLike[str], folder: Path, seed: int) -> Path:
    """The model at ``model_path`` re-initialised (:func:`~gecobench.evaluation.modelling.randomised_copy`, the
    built-ins' model-randomisation copy) and saved as a checkpoint folder of the same form: the sandbox is given
    it like any other model, so the submission cannot tell the randomisation run from the real one."""
    from gecobench.evaluation.modelling import randomised_copy
    from gecobench.models import load_zoo_model

    model, _, _ = load_zoo_model(model_path)
    shutil.copytree(model_path, folder)
    for weights in [*folder.glob("*.safetensors"), *folder.glob("*.bin"), *folder.glob("*.safetensors.index.json")]:
        weights.unlink()
    randomised_copy(model, seed).save_pretrained(folder)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


@dataclass
class _Variant:
    """One model a submission is run on, one sandbox run per run of rows: what the worker alone knows of it."""

    role: str  # "main", "randomised", "reference" or "control"
    path: str
    control: Any = None


def _explain_on(payload: Path, variant: _Variant, run_rows: list[Any], train_rows: list[Any], kinds: tuple[str, ...],
                config: WorkerConfig, settings: Any, rng: random.Random, isolation: dict[str, Any]):
    """One sandbox run of the submission on one model: the rows in a fresh random order under fresh opaque ids.
    Returns (result, scores in ``run_rows``' order per kind)."""
    order = list(range(len(run_rows)))
    rng.shuffle(order)
    rows = [run_rows[i] for i in order]
    result = run_submission(
        payload, variant.path, [list(r.words) for r in rows], [r.label for r in rows],
        limits=config.limits, seed=settings.seed, kinds=kinds, randomisation_seed=settings.randomisation_seed,
        noise_std=settings.noise_std, train_words=[list(r.words) for r in train_rows],
        train_labels=[r.label for r in train_rows], unsafe_no_sandbox=config.unsafe_no_sandbox,
        item_ids=[secrets.token_hex(8) for _ in rows],
    )
    isolation.update(result.isolation)
    if not result.ok:
        raise SubmissionRunError(result.reason, result.log_excerpt, dict(isolation))
    back: dict[str, list[Any]] = {}
    for kind, values in result.outputs["scores"].items():
        unshuffled: list[Any] = [None] * len(rows)
        for position, row_scores in zip(order, values):
            unshuffled[position] = row_scores
        back[kind] = unshuffled
    return result, back


def _run_code(view: RequestView, requests: RequestStore, config: WorkerConfig) -> tuple[list[str], dict[str, Any]]:
    """Run a code submission on every model of the set and on the hidden controls; score it.

    Every model the submission is scored on gets runs of its own, asking only for ``main`` scores: the real
    model, its re-initialised copy (the model-randomisation check), the zero-shot reference (RMA) and each hidden
    control model (:mod:`gecobench.controls`). Each run shows one model at the same path and the same rows (one
    gender variant per source sentence, shuffled anew, fresh opaque ids), so the process — or a result it forges
    on descriptor 3 — cannot know which model a run is: a forged result can only hold what an explainer of the
    model it was given would produce. A constant is then measured model-independent; a lookup of the gendered
    words scores near chance on the controls. The perturbation kinds (``noisy``, ``other_target``) come from a
    run of their own on the real model and stay the submission's word.
    """
    from gecobench.controls import (
        control_applies,
        control_block,
        control_per_sentence,
        load_control_models,
    )
    from gecobench.evaluation.precomputed import PrecomputedExplainer
    from gecobench.models import read_model_info

    settings = _settings(config)
    meta = view.request["metadata"]
    payload = requests.payload_path(view.request_id)
    rng = random.Random(secrets.randbits(64))  # unpredictable to the submission: no seed it could know
    record_ids: list[str] = []
    isolation: dict[str, Any] = {}
    controls = load_control_models(config.control_dir) if config.control_dir else []
    staging = Path(tempfile.mkdtemp(prefix="gecobench-worker-"))  # the randomised copies; removed below
    try:
        for geco_config in config.configs:
            groups, train_rows = _groups_to_explain(config, geco_config)
            control_scores: dict[int, dict[tuple[int, int], list[float]]] = defaultdict(dict)
            config_controls = controls if controls and control_applies(geco_config) else []
            controls_done = False
            control_rows: list[Any] = []
            for model_index, model_path in enumerate(config.model_paths):
                try:
                    reference_path, _ = zero_shot_reference_for(config, model_path, geco_config)
                except ZeroShotReferenceError as err:
                    raise SubmissionRunError(str(err), "", dict(isolation)) from None
                randomised = save_randomised_checkpoint(model_path, staging / f"randomised-{model_index}",
                                                        settings.randomisation_seed)
                variants = [_Variant("main", str(model_path)), _Variant("randomised", str(randomised))]
                if reference_path:
                    variants.append(_Variant("reference", str(reference_path)))
                with_controls = not controls_done and bool(config_controls)
                if with_controls:
                    variants += [_Variant("control", c.checkpoint, (i, c)) for i, c in enumerate(config_controls)]
                perturbation_kinds = ("noisy", "other_target") if settings.properties else ()
                scores: dict[str, dict[tuple[int, int], list[float]]] = defaultdict(dict)
                reported: dict[str, Any] = {}
                timing = OutsideTiming()
                num_labels = int(read_model_info(model_path).get("num_labels") or 2)
                runs = one_variant_per_run(groups, rng)
                sandbox_runs = 0
                for run_rows in runs:
                    jobs = [(variant, ("main",)) for variant in variants]
                    if perturbation_kinds:
                        jobs.append((_Variant("main", str(model_path)), perturbation_kinds))
                    rng.shuffle(jobs)  # no fixed order of models either
                    for variant, kinds in jobs:
                        result, back = _explain_on(payload, variant, run_rows, train_rows, kinds, config, settings,
                                                   rng, isolation)
                        keys = [(row.sentence_id, row.label) for row in run_rows]
                        if variant.role == "control":
                            index, _ = variant.control
                            control_scores[index].update(zip(keys, back["main"]))
                            continue
                        for kind, values in back.items():
                            kind = variant.role if kind == "main" else kind
                            scores[kind].update(zip(keys, values))
                        if variant.role == "main":
                            reported = result.outputs["explainer"]
                        sandbox_runs += 1
                        timing.add(result, len(run_rows), score_passes(kinds, num_labels))
                    if with_controls:
                        control_rows += run_rows
                if with_controls:
                    controls_done = True
                isolation.update(runs_per_model=sandbox_runs, rows_runs_per_model=len(runs),
                                 inputs="one gender variant per source sentence per run, one model per run (real, "
                                        "re-initialised, reference, hidden controls), shuffled, opaque ids")
                mrc = mean_model_randomisation_check(scores["main"], scores.get("randomised", {}))
                measured_independent = mrc is not None and mrc < MODEL_INDEPENDENT_MRC
                isolation["model_independent_by_mrc"] = measured_independent
                isolation["mean_mrc"] = None if mrc is None else round(mrc, 6)
                isolation["timing"] = timing.report()
                controls_record = None
                if config_controls and control_scores:
                    keys = [(r.sentence_id, r.label) for r in control_rows]
                    per_sentence, chance = control_per_sentence(
                        config_controls, [[list(r.words) for r in control_rows]] * len(config_controls),
                        [[control_scores[i][k] for k in keys] for i in range(len(config_controls))])
                    controls_record = control_block(per_sentence, chance, len(config_controls), settings.bootstrap,
                                                    settings.seed)
                    isolation["controls"] = {"mass_accuracy": controls_record["mass_accuracy"]["value"],
                                             "chance": controls_record["chance_mass_accuracy"]}
                kept_scores = {kind: table for kind, table in scores.items()
                               if kind == "main" or kind in ("randomised", "reference") or settings.properties}
                explainer = PrecomputedExplainer(
                    meta["name"], meta["version"], kept_scores, source="submission", submission_id=view.request_id,
                    model_independent=bool(reported.get("model_independent")) or measured_independent,
                    params=_public_params(reported.get("params") or {}),
                    seconds_per_row=timing.seconds_per_explanation(),
                )
                explainer.submission_sha256 = view.request["content_sha256"]
                explainer.controls = controls_record
                record_ids += _score(config, explainer, model_path, geco_config, reference_path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return record_ids, isolation


def score_passes(kinds: list[str] | tuple[str, ...], num_labels: int) -> int:
    """How many explanations of each input one sandbox run makes (``other_target``: one per other class)."""
    return sum(max(num_labels - 1, 1) if kind == "other_target" else 1 for kind in kinds)


@dataclass
class OutsideTiming:
    """A code submission's cost as the worker measures it, summed over its sandbox runs for one model.

    ``wall_seconds`` is the worker's clock from each sandbox's start to its exit, ``cpu_seconds`` the CPU time
    the kernel accounted to each run's cgroup: the whole run — interpreter start, model load, ``fit``, every
    score kind — whatever the submission does to its own clocks. The record's ``seconds_per_sentence`` is the
    wall clock divided by the explanations made (inputs × score passes), so that it compares with a built-in's
    per-explanation time; the submission's own ``main_seconds`` is kept as a diagnostic and never reaches a
    record.
    """

    wall_seconds: float = 0.0
    cpu_seconds: float | None = 0.0
    rows: int = 0
    explanations: int = 0
    self_reported_main_seconds: float = 0.0

    def add(self, result, rows: int, passes: int) -> None:
        self.wall_seconds += result.wall_seconds
        self.cpu_seconds = (None if self.cpu_seconds is None or result.cpu_seconds is None
                            else self.cpu_seconds + result.cpu_seconds)
        self.rows += rows
        self.explanations += rows * passes
        self.self_reported_main_seconds += float(result.outputs.get("main_seconds") or 0.0)

    def seconds_per_explanation(self) -> float:
        return self.wall_seconds / max(self.explanations, 1)

    def report(self) -> dict[str, Any]:
        per = max(self.explanations, 1)
        return {"measured": "outside the sandbox (the worker's clock; the run cgroup's CPU time)",
                "wall_seconds": round(self.wall_seconds, 4),
                "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 4),
                "rows": self.rows, "explanations": self.explanations,
                "wall_seconds_per_explanation": round(self.wall_seconds / per, 6),
                "cpu_seconds_per_explanation": None if self.cpu_seconds is None else round(self.cpu_seconds / per, 6),
                "self_reported_main_seconds": round(self.self_reported_main_seconds, 6),
                "self_reported_is": "a diagnostic only: measured by the submission's own interpreter"}


def _public_params(params: dict[str, Any]) -> dict[str, Any]:
    """The submission's params as they go into a public record: token-shaped strings redacted."""
    import json

    return json.loads(redact(json.dumps(params)))


def _run_precomputed(view: RequestView, requests: RequestStore, config: WorkerConfig) -> list[str]:
    from gecobench.evaluation.precomputed import PrecomputedExplainer
    from gecobench.flags import ground_truth_match

    meta = view.request["metadata"]
    payload_path = requests.payload_path(view.request_id)
    table: dict[tuple[str, str], dict[tuple[int, int], list[float]]] = defaultdict(dict)
    for row in iter_precomputed_rows(payload_path.read_bytes(), payload_path.name):
        table[(row["model"], row["config"])][(row["sentence_id"], row["label"])] = row["attributions"]
    record_ids: list[str] = []
    try:
        config.model_ids()  # a file's rows name the models by id: ids shared by two checkpoints are ambiguous
    except ModelSetError as err:
        raise SubmissionRunError(str(err), "", {}) from None
    for geco_config in config.configs:
        rows, _ = _rows_to_explain(config, geco_config)
        for model_path in config.model_paths:
            name = model_id(model_path)
            scores = table.get((name, geco_config), {})
            missing = [r for r in rows if (r.sentence_id, r.label) not in scores]
            if missing:
                example = missing[0]
                raise SubmissionRunError(
                    f"the file does not cover model {name!r} on {geco_config}: {len(missing)} of {len(rows)} test "
                    f"sentences missing (e.g. sentence_id {example.sentence_id}, label {example.label}); the model set "
                    f"is {config.model_set_name()}", "", {},
                )
            try:
                reference_path, _ = zero_shot_reference_for(config, model_path, geco_config)
                reference_name = reference_model_id(config, reference_path) if reference_path else None
            except (ZeroShotReferenceError, ModelSetError) as err:
                raise SubmissionRunError(str(err), "", {}) from None
            kinds = {"main": scores}
            # The RMA reference of self-reported attributions is the file's own rows for the zero-shot checkpoint
            # (never a published bundle's: those are the built-ins' attributions on it). Without them RMA is not
            # computed; the record says so.
            reference_scores = table.get((reference_name, geco_config), {}) if reference_name else {}
            if reference_scores and all((r.sentence_id, r.label) in reference_scores for r in rows):
                kinds["reference"] = reference_scores
            explainer = PrecomputedExplainer(
                meta["name"], meta["version"], kinds, source="self-reported", submission_id=view.request_id,
                missing_reason="self-reported attributions: no code to re-run on perturbed models",
            )
            explainer.submission_sha256 = view.request["content_sha256"]
            # The GECO ground truth is public: an upload of its masks is flagged, not ranked.
            explainer.ground_truth_match = ground_truth_match(
                [scores[(r.sentence_id, r.label)] for r in rows], [list(r.ground_truth) for r in rows])
            record_ids += _score(config, explainer, model_path, geco_config, reference_path)
    return record_ids


class SubmissionRunError(RuntimeError):
    """A request that cannot finish; carries the reason, a log excerpt and the isolation report."""

    def __init__(self, reason: str, log_excerpt: str, isolation: dict[str, Any]) -> None:
        super().__init__(reason)
        self.reason, self.log_excerpt, self.isolation = reason, log_excerpt, isolation


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def lease_is_stale(event: dict[str, Any], now: dt.datetime | None = None) -> bool:
    """Whether a RUNNING event's worker is gone: its process on this host has ended, or its lease expired."""
    now = now or _now()
    worker = str(event.get("worker") or "")
    host, _, pid = worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) == os.getpid():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass  # alive, someone else's
    try:
        expires = dt.datetime.fromisoformat(str(event.get("lease_expires_at")).replace("Z", "+00:00"))
    except ValueError:
        return True  # a RUNNING claim without a readable lease cannot be waited for
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=dt.UTC)  # naive times in events are UTC
    return now > expires


def recover_stale_requests(requests: RequestStore) -> dict[str, str]:
    """Re-queue each RUNNING request whose worker died (once); FAIL it with "worker died" the second time."""
    outcomes: dict[str, str] = {}
    for view in requests.list("RUNNING"):
        if view.integrity_error:
            continue  # a malformed history is left alone (and logged when its turn comes)
        if not lease_is_stale(view.last_event):
            continue
        recoveries = sum(1 for e in view.events if e.get("recovered"))
        try:
            if recoveries:
                requests.transition(view.request_id, "FAILED", worker=_worker_id(),
                                    reason="worker died: the worker running this request stopped twice without "
                                           "finishing (it was re-queued once)")
                outcomes[view.request_id] = "FAILED"
            else:
                requests.transition(view.request_id, "PENDING", worker=_worker_id(), recovered=True,
                                    reason="worker died while running this request; re-queued once")
                outcomes[view.request_id] = "PENDING"
        except TransitionError:
            continue  # another worker recovered it first
        log.warning("request %s: stale lease of %s; now %s", view.request_id, view.last_event.get("worker"),
                    outcomes[view.request_id])
    return outcomes


def process_request(view: RequestView, requests: RequestStore, config: WorkerConfig) -> str:
    """Claim and run one PENDING request; return its final status (``"SKIPPED"``: not claimable, or left
    PENDING because code cannot be sandboxed here). Never raises for anything in the request or the store."""
    worker = _worker_id()
    if view.integrity_error:
        log.error("request %s left alone: %s", view.request_id, view.integrity_error)
        return "SKIPPED"
    if view.request.get("track") == "code" and not config.unsafe_no_sandbox and not sandbox_status()[0]:
        log.error("request %s left PENDING: code submissions need the sandbox: %s", view.request_id,
                  sandbox_status()[1])
        return "SKIPPED"
    lease = (_now() + dt.timedelta(seconds=config.lease())).isoformat()
    try:
        requests.transition(view.request_id, "RUNNING", worker=worker, lease_expires_at=lease)
    except (TransitionError, KeyError, ValueError):
        return "SKIPPED"
    try:
        if view.request["track"] == "code":
            record_ids, isolation = _run_code(view, requests, config)
        else:
            record_ids, isolation = _run_precomputed(view, requests, config), None
        status, details = "FINISHED", {"result_record_ids": sorted(set(record_ids)), "isolation": isolation}
    except SubmissionRunError as err:
        status, details = "FAILED", {"reason": redact(err.reason)[:1000],
                                     "log_excerpt": redact(err.log_excerpt[-2000:]) or None,
                                     "isolation": err.isolation or None}
    except SandboxUnavailable as err:
        status, details = "FAILED", {"reason": f"the sandbox is unavailable on this worker: {err}"[:1000]}
    except Exception as err:  # noqa: BLE001 - any failure ends the request, never the worker
        status, details = "FAILED", {"reason": redact(f"evaluation failed: {type(err).__name__}: {err}")[:1000],
                                     "log_excerpt": redact(traceback.format_exc()[-2000:])}
    try:
        requests.transition(view.request_id, status, worker=worker, **details)
    except Exception as err:  # noqa: BLE001 - a store that refuses the event must not stop the queue
        log.error("request %s: could not record %s: %s", view.request_id, status, err)
        return "SKIPPED"
    return status


def process_queue(
    requests: RequestStore, config: WorkerConfig, loop: bool = False, poll_seconds: float = 10.0,
    max_requests: int | None = None,
) -> dict[str, str]:
    """Process PENDING requests oldest first; with ``loop`` keep polling. Returns request id → final status.

    Each pass first recovers requests whose worker died (stale leases). A model set in which two checkpoints
    share an id raises :class:`ModelSetError` before any request is claimed: every request would be ambiguous.
    """
    config.model_ids()
    outcomes: dict[str, str] = {}
    while True:
        recover_stale_requests(requests)
        pending = requests.list("PENDING")
        for view in pending:
            if max_requests is not None and len(outcomes) >= max_requests:
                return outcomes
            status = process_request(view, requests, config)
            outcomes[view.request_id] = status
            log.info("request %s (%s %s): %s", view.request_id, view.request["metadata"]["name"],
                     view.request["metadata"]["version"], status)
        if not loop:
            return outcomes
        time.sleep(poll_seconds)
