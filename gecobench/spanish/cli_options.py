"""Command-line options shared by the Spanish scripts (live scoring and the published predictions' import)."""

from __future__ import annotations

import argparse

from gecobench.metrics.bias_indices_bootstrap import BootstrapSettings


def add_bootstrap_arguments(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap-resamples``, ``--bootstrap-seed``, ``--confidence``: the template bootstrap's settings (they
    are part of each record's protocol, hence of its identity)."""
    defaults = BootstrapSettings()
    group = parser.add_argument_group("intervals (bootstrap over the 8 templates)")
    group.add_argument("--bootstrap-resamples", type=int, default=defaults.n_resamples, metavar="N",
                       help=f"resamples of the template bootstrap (default {defaults.n_resamples})")
    group.add_argument("--bootstrap-seed", type=int, default=defaults.seed, metavar="SEED",
                       help=f"seed of the template bootstrap (default {defaults.seed})")
    group.add_argument("--confidence", type=float, default=defaults.confidence, metavar="LEVEL",
                       help=f"confidence level of the intervals, in (0, 1) (default {defaults.confidence})")


def bootstrap_from_arguments(args: argparse.Namespace) -> BootstrapSettings:
    """The settings the options name; a ``ValueError`` naming the option when one is out of range."""
    values = {"n_resamples": args.bootstrap_resamples, "seed": args.bootstrap_seed, "confidence": args.confidence}
    options = {"n_resamples": "--bootstrap-resamples", "seed": "--bootstrap-seed", "confidence": "--confidence"}
    for field, value in values.items():
        try:
            BootstrapSettings(**{field: value})  # one setting at a time, so the message names the right option
        except ValueError as err:
            raise ValueError(f"{options[field]}: {err}") from err
    return BootstrapSettings(**values)
