"""Models as the evaluation sees them: loading, predictions, and the perturbed copies the property metrics need.

* :func:`load_model` — a zoo checkpoint folder through ``gecobench.models.load_zoo_model``, plus its content hash,
  with eager attention (:func:`use_eager_attention`), so attention-based explainers get attentions.
* :func:`randomised_copy` — model randomisation check (MRC): a deep copy whose every ``nn.Linear`` and
  ``nn.Embedding`` is re-initialised with PyTorch's default initialisation (``reset_parameters``) under a fixed
  seed. LayerNorms keep their weights: they carry no learned knowledge about the task worth randomising and
  resetting them to (1, 0) would be a no-op for most checkpoints anyway.
* :func:`noisy_copy` — small noise check (SNC): a deep copy whose input-embedding module adds a fixed Gaussian
  perturbation ``noise[position, dim] ~ N(0, std^2)`` (drawn once from a seeded generator) to its output. The
  perturbation depends only on the token position, so it is the same whatever the batch composition or the
  process that computes it, and explainers that hook the embedding layer (layer Integrated Gradients, …) see the
  noisy embedding as the input end-point.
* :class:`PerturbedCopies` — both copies of one model, built lazily and once for every explainer.
* :class:`StoredModel` — a model known only from the facts its records read (no weights): what records derived
  from stored chunk columns are built with.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gecobench.provenance import checkpoint_fingerprints
from gecobench.words import tokenize_words


class ModelFacts:
    """What a record says of a model, read from its ``info``: shared by a loaded model and one known only from
    stored facts (:class:`StoredModel`)."""

    info: dict[str, Any]

    @property
    def regime(self) -> str:
        return str(self.info.get("regime", "unknown"))

    @property
    def base_model(self) -> str:
        return str(self.info.get("base_model", "unknown"))


@dataclass
class LoadedModel(ModelFacts):
    """A model ready to evaluate, with the facts a record stores about it."""

    model: Any
    tokenizer: Any
    info: dict[str, Any]
    path: str
    checkpoint_sha256: str | None = None
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: :func:`gecobench.provenance.function_fingerprint`: what the checkpoint computes, not when it was saved
    function_sha256: str | None = None

    @property
    def num_labels(self) -> int:
        if self.info.get("num_labels"):
            return int(self.info["num_labels"])
        config = getattr(self.model, "config", None)
        return int(getattr(config, "num_labels", 2))


# What went into a checkpoint's training besides its seed and base model (both recorded on their own): two
# checkpoints that differ in any of these are different models even when regime, base and seed agree.
TRAINING_FINGERPRINT_FIELDS = (
    "geco_config", "num_labels", "architecture", "zero_shot_method", "learning_rate", "head_learning_rate",
    "schedule", "n_train",
)


def training_fingerprint(info: dict[str, Any]) -> str:
    """16 hex digits over the training inputs in a checkpoint's ``gecobench_model.json``
    (:data:`TRAINING_FINGERPRINT_FIELDS`; absent fields count as null)."""
    chosen = {name: info.get(name) for name in TRAINING_FINGERPRINT_FIELDS}
    canonical = json.dumps(chosen, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


#: the attention implementation every explained model runs with (see :func:`use_eager_attention`)
EXPLAINED_ATTENTION = "eager"


def use_eager_attention(model: Any) -> Any:
    """Switch ``model`` (and its sub-models: the zero-shot wrapper's encoder) to transformers' eager attention and
    return it.

    Why always, not only for explainers that ask for attentions: transformers loads BERT with ``sdpa``, whose
    kernels compute no attention weights, so ``output_attentions=True`` gives none (or falls back with a warning,
    depending on the version) and an attention-based explainer silently gets nothing. Eager for every explainer
    keeps one attention computation for all of them (a gradient explainer's scores do not depend on which explainer
    ran before it), and it costs nothing measurable on the benchmark's sentences: forward + backward of a batch of
    8 sentences of 16 tokens on one CPU thread took 2.49 ms eager against 2.25 ms sdpa on the tests' 2-layer tiny
    BERT and 91.5 ms against 101.3 ms on a MiniLM-L6-sized one (median of 20; the difference is within the shared
    machine's noise). Models without a switchable attention (OLA computes its own) are returned unchanged.
    """
    # Every (sub-)model that can switch, not only the top one: the zero-shot wrapper's own config may already say
    # eager while the encoder inside it runs sdpa.
    for module in model.modules() if isinstance(model, torch.nn.Module) else ():
        setter = getattr(module, "set_attn_implementation", None)
        config = getattr(module, "config", None)
        if callable(setter) and getattr(config, "_attn_implementation", EXPLAINED_ATTENTION) != EXPLAINED_ATTENTION:
            setter(EXPLAINED_ATTENTION)
    return model


def load_model(path: str | Path) -> LoadedModel:
    """Load a zoo checkpoint folder for evaluation (``gecobench.models.load_zoo_model``; eval mode, CPU, eager
    attention: :func:`use_eager_attention`)."""
    from gecobench.models import load_zoo_model

    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"model folder not found: {folder}")
    model, tokenizer, info = load_zoo_model(str(folder))
    use_eager_attention(model)
    model.eval()
    checkpoint_sha256, function_sha256 = checkpoint_fingerprints(folder)
    return LoadedModel(model, tokenizer, dict(info), str(folder), checkpoint_sha256, model_name(folder),
                       function_sha256=function_sha256)


def model_name(folder: Path) -> str:
    """A readable name for a checkpoint folder: its name, or in the zoo layout ``<config>/<regime>/seed<N>``
    the last three parts (every zoo checkpoint is called ``seed0``, which names nothing)."""
    if re.fullmatch(r"seed\d+", folder.name) and len(folder.parts) >= 3:
        return "/".join(folder.parts[-3:])
    return folder.name


@torch.no_grad()
def predict(model: Any, tokenizer: Any, words: list[list[str]], batch_size: int = 32) -> np.ndarray:
    """Predicted class per sentence (argmax of the logits)."""
    out: list[np.ndarray] = []
    device = next((p.device for p in model.parameters()), None) if hasattr(model, "parameters") else None
    for start in range(0, len(words), batch_size):
        encoding, _ = tokenize_words(tokenizer, words[start:start + batch_size])
        # a model object handed to the Python front door may live on a GPU; the tokenizer's tensors are on the CPU
        inputs = {k: (v.to(device) if device is not None else v) for k, v in encoding.items()
                  if k in ("input_ids", "attention_mask", "token_type_ids")}
        logits = model(**inputs).logits
        out.append(logits.argmax(dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def randomised_copy(model: Any, seed: int) -> Any:
    """A copy of ``model`` with every Linear and Embedding re-initialised (seeded); see the module docstring."""
    clone = copy.deepcopy(model)
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        n_reset = 0
        for module in clone.modules():
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                module.reset_parameters()
                n_reset += 1
    finally:
        torch.random.set_rng_state(generator_state)
    if n_reset == 0:
        raise ValueError("model randomisation check: the model has no Linear or Embedding layer to re-initialise")
    clone.eval()
    return clone


def noisy_copy(model: Any, std: float, seed: int, max_positions: int = 512) -> Any:
    """A copy of ``model`` whose input embeddings carry a fixed Gaussian perturbation (see module docstring)."""
    if std < 0:
        raise ValueError(f"noise std must be >= 0, got {std}")
    clone = copy.deepcopy(model)
    embedding = clone.get_input_embeddings()
    dim = int(embedding.weight.shape[1])
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(max_positions, dim, generator=generator, dtype=torch.float32) * float(std)

    def add_noise(_module: Any, _inputs: Any, output: torch.Tensor) -> torch.Tensor:
        length = output.shape[-2]
        if length > max_positions:
            raise ValueError(f"small noise check: sequence of {length} tokens exceeds {max_positions} positions")
        return output + noise[:length].to(dtype=output.dtype, device=output.device)

    embedding.register_forward_hook(add_noise)
    clone.eval()
    return clone


class PerturbedCopies:
    """Lazily built randomised and noisy copies of one model (built once, reused by every explainer)."""

    def __init__(self, model: Any, noise_std: float, randomisation_seed: int) -> None:
        self._model, self._noise_std, self._seed = model, noise_std, randomisation_seed
        self._randomised: Any = None
        self._noisy: Any = None

    @property
    def randomised(self) -> Any:
        if self._randomised is None:
            self._randomised = randomised_copy(self._model, self._seed)
        return self._randomised

    @property
    def noisy(self) -> Any:
        if self._noisy is None:
            self._noisy = noisy_copy(self._model, self._noise_std, self._seed + 1)
        return self._noisy


def other_targets(label: int, num_labels: int) -> list[int]:
    """The classes a label-difference attribution explains: every class except ``label``."""
    if not 0 <= label < num_labels:
        raise ValueError(f"label {label} outside 0..{num_labels - 1}")
    return [c for c in range(num_labels) if c != label]


def mean_over_other_targets(
    explain: Callable[[list[int]], list[Any]], targets: list[int], num_labels: int
) -> list[list[float]]:
    """Word scores explaining every class but each row's own, averaged per row (label difference's input).

    ``explain(targets)`` returns one score vector per row. For binary models this is the other class; with three
    classes, the mean over the two others.
    """
    others = [other_targets(t, num_labels) for t in targets]
    per_other = [explain([o[k] for o in others]) for k in range(num_labels - 1)]
    return [np.mean([np.asarray(p[i]) for p in per_other], axis=0).tolist() for i in range(len(targets))]


# ------------------------------------------------------------------------- models handed over as objects
#: ``LoadedModel.path`` of a model handed over as an object (no folder): never a folder name, so nothing looks
#: for checkpoints next to it
IN_MEMORY_PREFIX = "memory:"


def model_object_fingerprint(model: Any, tokenizer: Any) -> str:
    """SHA-256 of what an in-memory model computes: its config (without where it was loaded from, as
    :func:`gecobench.provenance.function_fingerprint` reads ``config.json``), every parameter and buffer (name,
    dtype, shape, bytes) and the tokenizer's class and vocabulary. Two objects with the same weights, config and
    vocabulary get the same fingerprint, whoever built them."""
    from gecobench.provenance import CONFIG_PROVENANCE_KEYS

    digest = hashlib.sha256()
    config = getattr(model, "config", None)
    config_dict = config.to_dict() if hasattr(config, "to_dict") else {}
    config_dict = {k: v for k, v in config_dict.items() if k not in CONFIG_PROVENANCE_KEYS}
    digest.update(json.dumps([type(model).__name__, config_dict], sort_keys=True, default=str).encode("utf-8"))
    for name, tensor in sorted(model.state_dict().items()):
        tensor = tensor.detach().cpu().contiguous()
        digest.update(json.dumps([name, str(tensor.dtype), list(tensor.shape)]).encode("utf-8"))
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    digest.update(json.dumps([type(tokenizer).__name__, sorted(vocab.items())], ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()


def check_sequence_classifier(model: Any, tokenizer: Any) -> int:
    """Refuse what is not a sequence classifier of the model contract, naming what is wrong; return its number of
    classes. A classifier here is a ``torch.nn.Module`` that, called on the tokenizer's ``input_ids`` and
    ``attention_mask``, returns an object with ``logits`` of shape ``(batch, num_labels)``, ``num_labels >= 2``."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a transformers model object (a torch.nn.Module), a zoo checkpoint folder or "
                        f"a Hub id; got {type(model).__name__}")
    if tokenizer is None or not callable(tokenizer):
        raise TypeError(f"{type(model).__name__}: a tokenizer is needed (pass tokenizer=...); got {tokenizer!r}")
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            encoding, _ = tokenize_words(tokenizer, [["a", "test"]])
            device = next((p.device for p in model.parameters()), torch.device("cpu"))
            output = model(**{k: v.to(device) for k, v in encoding.items()
                              if k in ("input_ids", "attention_mask", "token_type_ids")})
    except Exception as err:
        raise ValueError(f"{type(model).__name__} could not run on its tokenizer's output ({type(err).__name__}: "
                         f"{err}); the model must be a sequence classifier taking input_ids and attention_mask"
                         ) from err
    finally:
        model.train(was_training)
    logits = getattr(output, "logits", None)
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or logits.shape[0] != 1 or logits.shape[1] < 2:
        shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else None
        raise ValueError(f"{type(model).__name__} is not a sequence classifier: its output has no logits of shape "
                         f"(batch, num_labels >= 2) (got {type(output).__name__} with logits of shape {shape}); use a "
                         f"...ForSequenceClassification model")
    return int(logits.shape[1])


def loaded_from_objects(model: Any, tokenizer: Any, info: dict[str, Any] | None = None, name: str | None = None
                        ) -> LoadedModel:
    """A model object and its tokenizer as the evaluation sees a checkpoint: checked to be a sequence classifier
    (:func:`check_sequence_classifier`), fingerprinted (:func:`model_object_fingerprint`: its
    ``checkpoint_sha256`` and ``function_sha256``) and described by ``info`` (the fields of a zoo checkpoint's
    ``gecobench_model.json``; by default regime ``user``, the config's ``_name_or_path`` as base model, no seed).

    The model is used as it is (device, dtype); the evaluation switches it to eval mode while it runs, and to eager
    attention (:func:`use_eager_attention`, the same math as ``sdpa``) so attention-based explainers get attentions.
    """
    num_labels = check_sequence_classifier(model, tokenizer)
    fingerprint = model_object_fingerprint(model, tokenizer)  # of the object as given, before the switch below
    use_eager_attention(model)
    config = getattr(model, "config", None)
    base = getattr(config, "_name_or_path", None) or type(model).__name__
    facts: dict[str, Any] = {"regime": "user", "base_model": str(base), "base_revision": None, "seed": None,
                             "geco_config": None, "num_labels": num_labels, "architecture": type(model).__name__}
    facts.update(info or {})
    if int(facts["num_labels"]) != num_labels:
        raise ValueError(f"model info says num_labels={facts['num_labels']} but the model has {num_labels} classes")
    return LoadedModel(model, tokenizer, facts, f"{IN_MEMORY_PREFIX}{fingerprint[:16]}", fingerprint,
                       name or str(base), function_sha256=fingerprint)


def as_loaded_model(model: str | Path | LoadedModel) -> LoadedModel:
    """A model of a run: a zoo checkpoint folder (:func:`load_model`) or an already loaded :class:`LoadedModel`
    (returned as it is: e.g. :func:`loaded_from_objects`, the Python front door's model object)."""
    return model if isinstance(model, LoadedModel) else load_model(model)


def model_key(model: str | Path | LoadedModel) -> str:
    """How a run names one of its models in its bookkeeping (predictions, reference cache): its folder, or
    the loaded model's path (``memory:<fingerprint>`` for an object)."""
    return model.path if isinstance(model, LoadedModel) else str(model)


@dataclass
class StoredModel(ModelFacts):
    """What records say about a model, without its weights: the stand-in of a :class:`LoadedModel` when records
    are derived from stored chunks (:func:`gecobench.evaluation.runner.derive_records`)."""

    info: dict[str, Any]
    path: str
    checkpoint_sha256: str | None
    name: str
    function_sha256: str | None
    num_labels: int

    @classmethod
    def from_json(cls, document: Any, where: str) -> StoredModel:
        if not isinstance(document, dict) or not isinstance(document.get("info"), dict):
            raise ValueError(f"{where}: a model's facts need an 'info' object")  # noqa: TRY004 (bad file content)
        missing = [k for k in ("path", "checkpoint_sha256", "name", "function_sha256", "num_labels")
                   if k not in document]
        if missing:
            raise ValueError(f"{where}: model facts lack {missing}")
        return cls(info=dict(document["info"]), path=str(document["path"]),
                   checkpoint_sha256=document["checkpoint_sha256"], name=str(document["name"]),
                   function_sha256=document["function_sha256"], num_labels=int(document["num_labels"]))


def stored_model_facts(lm: Any) -> dict[str, Any]:
    """The facts of a (loaded or stored) model that its records read (:class:`StoredModel`), JSON-ready."""
    return {"info": dict(lm.info), "path": str(lm.path), "checkpoint_sha256": lm.checkpoint_sha256,
            "name": lm.name, "function_sha256": lm.function_sha256, "num_labels": int(lm.num_labels)}
