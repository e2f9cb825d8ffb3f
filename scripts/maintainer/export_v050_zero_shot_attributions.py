#!/usr/bin/env python
"""Export the zero-shot attributions of a reference run made at v0.5.0 as published bundles (maintainers).

Runs after v0.5.0 write their bundles themselves (``make reference``: ``zero_shot_attributions/`` beside the
store). A v0.5.0 run did not, and its checkpoints use that version's names: the zero-shot reference unit was keyed
by the folder's fingerprint and the whole protocol (without the filter), and the explainer folders carried no
version. This reads those units and writes the bundles under the current names; the explainer versions of the
reference run did not change since v0.5.0 (``tests/test_reference.py`` recomputes chunks of the committed bundles
with the current code). The committed seed-0 bundles were made with:

  python scripts/maintainer/export_v050_zero_shot_attributions.py --seed 0 \\
      --checkpoints ../wt-v050/runs/reference/eval_checkpoints --zoo ../wt-v050/runs/reference/zoo

then re-keyed by the function fingerprint of 0.6.0 (``rekey_zero_shot_bundles.py``; this script names the units by
the current fingerprint itself) and extended with Partition SHAP (``extend_zero_shot_attributions.py``), which the
v0.5.0 run did not compute.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from gecobench.evaluation.checkpoints import CheckpointStore, reference_unit_name
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.published_reference import export_bundle
    from gecobench.evaluation.runner import (
        ExplainerSpec,
        reference_chunk_rows,
        spec_checkpoint_key,
    )
    from gecobench.provenance import checkpoint_fingerprints
    from gecobench.reference import CONFIGS, PAPER_EXPLAINERS, ReferencePlan

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--checkpoints", type=Path, required=True, help="the v0.5.0 run's eval_checkpoints folder")
    parser.add_argument("--zoo", type=Path, required=True, help="the v0.5.0 run's zoo folder")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    parser.add_argument("--output", type=Path, default=ReferencePlan().attributions_dir,
                        help="where the bundles go (default: reference/zero_shot_attributions)")
    args = parser.parse_args(argv)

    plan = ReferencePlan(seeds=(args.seed,))
    # the attributions cover every scorable row: the run computed them with both filters, i.e. without one
    settings = dataclasses.replace(plan.evaluation_settings(args.seed), filter="none")
    # the v0.5.0 plan's explainers (the ten; Partition SHAP joined the plan later and is added by
    # extend_zero_shot_attributions.py)
    # v0.5.0 ran the ten at their defaults of then (LIME 3.0.0: 100 samples): the names, not the 1.0 plan's specs
    specs = [ExplainerSpec.parse(ExplainerSpec.parse(e).name) for e in PAPER_EXPLAINERS]
    with tempfile.TemporaryDirectory() as tmp:
        renamed = Path(tmp)
        for config in args.configs:
            zero_shot = args.zoo / config / "ZS" / f"seed{args.seed}"
            split = load_split(config, "test")
            checkpoint_sha256, function_sha256 = checkpoint_fingerprints(zero_shot)
            legacy_protocol = {k: v for k, v in settings.protocol().items() if k != "filter"}
            legacy_unit = "reference-" + hashlib.sha256(json.dumps(
                [checkpoint_sha256, split.fingerprint, legacy_protocol],
                sort_keys=True).encode()).hexdigest()[:16]
            if not (args.checkpoints / legacy_unit).is_dir():
                parser.error(f"{config}: no v0.5.0 reference unit {legacy_unit} in {args.checkpoints}")
            unit = reference_unit_name(function_sha256, split.fingerprint,
                                       settings.attribution_protocol())
            keys = []
            for spec in specs:
                key = spec_checkpoint_key(spec)
                shutil.copytree(args.checkpoints / legacy_unit / spec.key(), renamed / unit / key)
                keys.append(key)
            info = json.loads((zero_shot / "gecobench_model.json").read_text(encoding="utf-8"))
            made_by = info.get("provenance") or {}
            path = export_bundle(
                CheckpointStore(renamed), args.output,
                reference={"name": f"{config}/ZS/seed{args.seed}", "function_sha256": function_sha256,
                           "checkpoint_sha256": checkpoint_sha256,
                           "base_model": info.get("base_model"), "seed": info.get("seed")},
                dataset={"config": split.config, "split": split.split, "fingerprint": split.fingerprint},
                attribution_protocol=settings.attribution_protocol(), chunk_rows=reference_chunk_rows(split, settings),
                explainer_keys=keys,
                provenance={**{k: made_by.get(k) for k in ("package", "package_version", "git_commit", "libraries")},
                            "seed": args.seed, "exported_from": "the v0.5.0 reference run's checkpoints"})
            print(f"{config}: {legacy_unit} -> {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
