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
by ``<spec key>-v<version>`` (:func:`gecobench.evaluation.checkpoints.checkpoint_key`); adding a code hash to built-ins
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


def _source_bytes(obj: Any) -> bytes | None:
    """The bytes of the file defining ``obj`` (a class or function; the whole module: helpers beside it count),
    else its source text, else None."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    try:
        filename = inspect.getsourcefile(obj) or (getattr(module, "__file__", None) if module else None)
    except TypeError:  # a built-in or an object without a module file
        filename = None
    if filename and Path(filename).is_file():
        return Path(filename).read_bytes()
    try:
        return inspect.getsource(obj).encode("utf-8")
    except (OSError, TypeError):
        return None


def _code_objects(explainer: Any) -> list[Any]:
    """What a non-built-in explainer's scores are computed by: every class of its MRO defined outside gecobench,
    and what a wrapper class in gecobench (the Python front door's function or captum adapters) holds in
    ``__wrapped__`` (a function, a class, or an instance, for which its class counts)."""
    objects = [klass for klass in type(explainer).__mro__
               if klass is not object and not _in_package(klass.__module__) and klass.__module__ not in ("builtins", "abc")]
    wrapped = getattr(explainer, "__wrapped__", None)
    if wrapped is not None:
        objects.append(wrapped if inspect.isfunction(wrapped) or inspect.isclass(wrapped) or inspect.ismethod(wrapped)
                       else type(wrapped))
    return objects


@cache
def _object_fingerprint(obj: Any) -> tuple[str, bool]:
    """SHA-256 of one code object's name and source, and whether the source could be read. Cached per object: a
    file edited while the process runs is a new run's business (and a re-imported module makes new objects)."""
    source = _source_bytes(obj)
    name = f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}\0"
    body = _PROCESS_TOKEN.encode() if source is None else hashlib.sha256(source).digest()
    return hashlib.sha256(name.encode() + body).hexdigest(), source is not None


def _code_fingerprint(explainer: Any) -> tuple[str, bool]:
    """SHA-256 over the sources of :func:`_code_objects`, and whether every one could be read (nothing to read,
    e.g. a wrapper that does not say what it wraps, counts as unreadable)."""
    objects = _code_objects(explainer)
    if not objects:
        return hashlib.sha256(_PROCESS_TOKEN.encode()).hexdigest(), False
    parts = [_object_fingerprint(obj) for obj in objects]
    return hashlib.sha256("".join(h for h, _ in parts).encode()).hexdigest(), all(ok for _, ok in parts)


def source_fingerprint(explainer: Any) -> str | None:
    """64 hex digits naming the code a non-built-in explainer runs with its version and parameters; None for
    built-ins (their version is the key) and for the queue's explainers (their submission's SHA-256 is)."""
    if explainer_source(explainer) != USER:
        return None
    code, complete = _code_fingerprint(explainer)
    if not complete:
        log.warning("explainer %s: its source cannot be read (defined interactively?); its checkpoints are not "
                    "reused by later runs", getattr(explainer, "name", type(explainer).__qualname__))
    params = explainer.params() if callable(getattr(explainer, "params", None)) else {}
    payload = json.dumps([code, str(getattr(explainer, "version", "")), params], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
