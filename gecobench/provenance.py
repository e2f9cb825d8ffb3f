"""How a result was made: package version, git commit, library versions, data fingerprints, time.

The primitives the dataset package needs too (:func:`base_provenance`, :func:`git_commit`,
:func:`library_versions`, :func:`sha256_file`, :func:`utc_now`) are defined in the base layer,
:mod:`geco_common.provenance`, and re-exported here; the benchmark's fingerprints (rows, canonical JSON,
checkpoint folders) and machine descriptions are defined here.
"""

from __future__ import annotations

import hashlib
import json
import platform
import struct
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from geco_common.provenance import (
    REPO_ROOT,
    base_provenance,
    git_commit,
    library_versions,
    sha256_file,
    utc_now,
)

__all__ = [
    "CHECKPOINT_FILES", "CONFIG_PROVENANCE_KEYS", "DERIVED_TENSORS", "FUNCTION_FILES", "REPO_ROOT", "base_provenance",
    "canonical_sha256", "checkpoint_fingerprints", "cpu_model", "fingerprint_directory", "fingerprint_rows",
    "function_fingerprint", "git_commit", "library_versions", "machine_description", "sha256_file", "utc_now",
]


def canonical_sha256(document: Any) -> str:
    """SHA-256 of ``document`` as canonical JSON (sorted keys, no spaces): the fingerprint of a committed
    file's content (prediction files, evaluation columns), the same on every machine."""
    return hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what :mod:`platform` knows): speed figures differ by a
    third between the kinds of 2-core machine this project runs on (an AMD EPYC, an Intel Xeon), so a benchmark
    names the one it ran on."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_description() -> str:
    """One line for a benchmark's ``machine`` field: CPU model and count, Python and torch versions."""
    import os

    torch_version = library_versions().get("torch", "not installed")
    return (f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} CPUs), Python {platform.python_version()}, "
            f"torch {torch_version}")


def fingerprint_rows(rows: Iterable[Any]) -> str:
    """A stable fingerprint (SHA-256 of canonical JSON lines) of a sequence of JSON-serialisable rows."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


#: the files :func:`fingerprint_directory` reads by default: everything a checkpoint folder saves
CHECKPOINT_FILES: tuple[str, ...] = ("*.json", "*.safetensors", "*.bin", "*.txt")


def _folder_digest(root: Path, patterns: tuple[str, ...], file_digest: Callable[[Path], str]) -> str:
    """SHA-256 over the names and ``file_digest`` of the files matching ``patterns`` (order-independent)."""
    digest = hashlib.sha256()
    for file in sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()}):
        digest.update(file.name.encode("utf-8"))
        digest.update(file_digest(file).encode("ascii"))
    return digest.hexdigest()


def fingerprint_directory(path: str | Path, patterns: tuple[str, ...] = CHECKPOINT_FILES) -> str:
    """SHA-256 over the names and contents of the files in a checkpoint folder (order-independent)."""
    return _folder_digest(Path(path), patterns, sha256_file)


#: the files of a checkpoint folder that decide what it computes — weights, architecture, vocabulary and
#: tokenization pipeline — and not its metadata (``gecobench_model.json`` holds creation time and commit,
#: ``tokenizer_config.json`` loading options such as ``local_files_only``)
FUNCTION_FILES: tuple[str, ...] = ("config.json", "*.safetensors", "*.bin", "tokenizer.json", "vocab.txt")
#: ``config.json`` entries that say where and with what a checkpoint was saved, not what it computes (the base
#: model's path, different in every virtual environment; the transformers version that wrote the file)
CONFIG_PROVENANCE_KEYS = frozenset({"_name_or_path", "name_or_path", "transformers_version"})


def _without_provenance(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_provenance(v) for k, v in value.items() if k not in CONFIG_PROVENANCE_KEYS}
    if isinstance(value, list):
        return [_without_provenance(v) for v in value]
    return value


#: Tensors that a model type computes, when it is built, from the rest of its checkpoint: the zero-shot classifier's
#: label embeddings are its own encoder's embeddings of the label descriptions in its config. Their bits follow the
#: CPU that built them (float32 sums taken in another order), not the recipe, so the function fingerprint leaves them
#: out: the zero-shot model the published RMA reference was computed with and the one a user builds on another kind
#: of CPU are recognised as one function, as their encoders, configs and tokenizers are bit for bit the same.
DERIVED_TENSORS: dict[str, frozenset[str]] = {"gecobench_zero_shot": frozenset({"label_embeddings"})}


def _safetensors_digests(file: Path, leave_out: frozenset[str], chunk_size: int = 1 << 20) -> tuple[str, str]:
    """``(SHA-256 of the file, digest of its tensors but leave_out)`` in one read. The second is a SHA-256 over the
    name, dtype, shape and bytes' SHA-256 of each tensor, in name order, so it does not depend on the writer's
    layout."""
    whole = hashlib.sha256()
    with open(file, "rb") as handle:
        head = handle.read(8)
        try:
            (header_size,) = struct.unpack("<Q", head)
            raw_header = handle.read(header_size)
            header = json.loads(raw_header.decode("utf-8"))
        except (struct.error, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{file}: not a safetensors file ({err})") from None
        if not isinstance(header, dict):  # a malformed file is bad input, not a caller's type error
            raise ValueError(f"{file}: not a safetensors file (its header is not a JSON object)")  # noqa: TRY004
        whole.update(head)
        whole.update(raw_header)
        spans: dict[str, tuple[int, int, str]] = {}
        for name in set(header) - leave_out - {"__metadata__"}:
            entry = header[name]
            try:
                start, end = (int(v) for v in entry["data_offsets"])
                meta = json.dumps([name, entry["dtype"], entry["shape"]])
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(
                    f"{file}: tensor {name!r} has no valid dtype, shape and data_offsets ({err})") from None
            if not 0 <= start <= end:
                raise ValueError(f"{file}: tensor {name!r} lies outside the file")
            spans[name] = (start, end, meta)
        # the data section read once, in order: every byte feeds the file's hash, each tensor's bytes its own
        tensor_hashes = {name: hashlib.sha256() for name in spans}
        position = 0
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            whole.update(chunk)
            view, low, high = memoryview(chunk), position, position + len(chunk)
            for name, (start, end, _) in spans.items():
                if start < high and end > low:
                    tensor_hashes[name].update(view[max(start, low) - low:min(end, high) - low])
            position = high
    digest = hashlib.sha256()
    for name in sorted(spans):
        start, end, meta = spans[name]
        if end > position:
            raise ValueError(f"{file}: tensor {name!r} lies outside the file")
        digest.update(meta.encode("utf-8"))
        digest.update(tensor_hashes[name].digest())
    return whole.hexdigest(), digest.hexdigest()


def _derived_tensors(root: Path) -> frozenset[str]:
    """The :data:`DERIVED_TENSORS` of the checkpoint folder's model type (none without a readable config)."""
    try:
        model_type = json.loads((root / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return frozenset()
    return DERIVED_TENSORS.get(model_type, frozenset()) if isinstance(model_type, str) else frozenset()


def _config_digest(file: Path) -> str:
    """``config.json``'s part of :func:`function_fingerprint`: its entries without :data:`CONFIG_PROVENANCE_KEYS`."""
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{file}: not a JSON config ({err})") from None
    return hashlib.sha256(json.dumps(_without_provenance(config), sort_keys=True).encode("utf-8")).hexdigest()


def function_fingerprint(path: str | Path) -> str:
    """SHA-256 over the :data:`FUNCTION_FILES` of a checkpoint folder (``config.json`` read without its
    :data:`CONFIG_PROVENANCE_KEYS`, at any depth; the weights without the tensors the model type derives when it is
    built, :data:`DERIVED_TENSORS`): two folders with the same fingerprint compute the same function, up to the float
    rounding of those derived tensors, whenever, wherever and from whichever environment they were saved (a
    zero-shot model rebuilt on another CPU, say), while :func:`fingerprint_directory` tells two saves apart.
    (Computed with the folder fingerprint, which costs only the small metadata files more.)"""
    return checkpoint_fingerprints(path)[1]


def checkpoint_fingerprints(path: str | Path) -> tuple[str, str]:
    """``(fingerprint_directory(path), function_fingerprint(path))``, reading each file once (the weights are
    most of a checkpoint's bytes and both fingerprints hash them)."""
    root = Path(path)
    leave_out = _derived_tensors(root)
    file_shas: dict[Path, str] = {}
    tensor_digests: dict[Path, str] = {}  # weights with derived tensors: their digest without them

    def file_sha(file: Path) -> str:
        if file not in file_shas:
            if leave_out and file.suffix == ".safetensors":
                file_shas[file], tensor_digests[file] = _safetensors_digests(file, leave_out)
            else:
                file_shas[file] = sha256_file(file)
        return file_shas[file]

    def function_digest(file: Path) -> str:
        if file.name == "config.json":
            return _config_digest(file)
        sha = file_sha(file)
        return tensor_digests.get(file, sha)

    return (_folder_digest(root, CHECKPOINT_FILES, file_sha), _folder_digest(root, FUNCTION_FILES, function_digest))
