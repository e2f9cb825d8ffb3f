"""Where an explainer comes from, and the fingerprint of the code that computes its scores.

``source`` (recorded in every ``explainer_score`` record's ``explainer.source``):

* ``builtin`` — a class defined in the ``gecobench`` package itself;
* ``user`` — any other class: one registered from a user's module (``gecobench evaluate --import my_module.py``),
  an installed plug-in, a class passed in as an instance;
* ``submission`` / ``self-reported`` — the queue's explainers (:class:`~gecobench.evaluation.precomputed.PrecomputedExplainer`
  sets its ``source`` attribute; an instance's own ``source`` attribute always wins).

Why checkpoints and record ids of non-built-in explainers carry a fingerprint of their source and built-ins do not:
a built-in's code ships with the package, its ``version`` is bumped in review whenever its scores change
(``tests/test_reference.py`` holds the previous defaults), and the published zero-shot reference bundles are keyed
by ``<spec key>-v<version>`` (:func:`gecobench.evaluation.runner.checkpoint_key`); adding a code hash to built-ins
would orphan every published bundle on every unrelated refactor. A user's explainer has no such review: its author
edits the file and reruns, usually without touching ``version``, and the old checkpoints must then not be served
(the issue's stale MA 0.178 against the true 0.155). So its fingerprint covers the bytes of every source file that
defines a class of its MRO outside ``gecobench`` (the module file; ``inspect.getsource`` of the class where there
is no file), its ``version`` and its parameters. What the fingerprint cannot see: code in *other* modules the
explainer imports and calls. Such a helper's edit needs a new ``version`` (documented in ``docs/explainers.md``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import sys
import uuid
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger("gecobench.evaluation")

BUILTIN = "builtin"
USER = "user"
SUBMISSION = "submission"
#: every value ``explainer.source`` may hold in a record (``plugin``: records of schema 2.1 and earlier)
SOURCES = (BUILTIN, USER, SUBMISSION, "self-reported", "plugin")
#: sources whose record identity carries their origin (who submitted or wrote the code), see gecobench.records
_PACKAGE = "gecobench"

# A class whose source cannot be read (defined in an interactive session) is fingerprinted by a token unique to
# this process: its checkpoints are reused within the run but never by a later run, which may hold other code.
_PROCESS_TOKEN = uuid.uuid4().hex


def _in_package(module_name: str) -> bool:
    return module_name == _PACKAGE or module_name.startswith(_PACKAGE + ".")


def explainer_source(explainer: Any) -> str:
    """``builtin``, ``user``, ``submission`` or ``self-reported`` (see the module docstring)."""
    own = getattr(explainer, "source", None)
    if isinstance(own, str) and own:
        return own
    return BUILTIN if _in_package(type(explainer).__module__) else USER


def _class_source_bytes(cls: type) -> bytes | None:
    """The bytes of the file defining ``cls`` (the whole module: helpers beside the class count), else the class's
    source text, else None."""
    module = sys.modules.get(cls.__module__)
    try:
        filename = inspect.getsourcefile(cls) or (getattr(module, "__file__", None) if module else None)
    except TypeError:  # a built-in class or one without a module file
        filename = None
    if filename and Path(filename).is_file():
        return Path(filename).read_bytes()
    try:
        return inspect.getsource(cls).encode("utf-8")
    except (OSError, TypeError):
        return None


@cache
def _code_fingerprint(cls: type) -> tuple[str, bool]:
    """SHA-256 over the source of every class in ``cls``'s MRO defined outside gecobench, and whether every such
    source could be read. Cached per class: a file edited while the process runs is a new run's business."""
    digest = hashlib.sha256()
    complete = True
    for klass in cls.__mro__:
        if klass is object or _in_package(klass.__module__) or klass.__module__ in ("builtins", "abc"):
            continue
        source = _class_source_bytes(klass)
        digest.update(f"{klass.__module__}.{klass.__qualname__}\0".encode())
        if source is None:
            complete = False
            digest.update(_PROCESS_TOKEN.encode())
        else:
            digest.update(hashlib.sha256(source).digest())
    return digest.hexdigest(), complete


def source_fingerprint(explainer: Any) -> str | None:
    """64 hex digits naming the code a non-built-in explainer runs with its version and parameters; None for
    built-ins (their version is the key) and for the queue's explainers (their submission's SHA-256 is)."""
    if explainer_source(explainer) != USER:
        return None
    code, complete = _code_fingerprint(type(explainer))
    if not complete:
        log.warning("explainer %s: its source cannot be read (defined interactively?); its checkpoints are not "
                    "reused by later runs", getattr(explainer, "name", type(explainer).__qualname__))
    params = explainer.params() if callable(getattr(explainer, "params", None)) else {}
    payload = json.dumps([code, str(getattr(explainer, "version", "")), params], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
