#!/usr/bin/env python
"""Re-key published zero-shot bundles under the function fingerprint of 0.6.0 (maintainers, once).

Up to 0.5.x a checkpoint's function fingerprint hashed its whole weights file. A zero-shot model's label embeddings
are computed when it is built, and their last bits follow the CPU (the seed-0 bundles were made on an AMD EPYC; an
Intel Xeon builds other bits from the same base and recipe), so the published reference matched no zero-shot model
built on another kind of CPU and every such run computed its own. Since 0.6.0 the fingerprint leaves those derived
tensors out (``gecobench.provenance.DERIVED_TENSORS``). This rewrites each bundle's ``reference.function_sha256``
and unit (its file name) for a local zero-shot checkpoint of the same config and seed, after checking that the
checkpoint computes the bundle's attributions: one chunk of three explainers recomputed here must agree within
``--tolerance`` (relative to each sentence's largest score). The attributions themselves are not touched.

  python scripts/maintainer/rekey_zero_shot_bundles.py --zoo runs/reference/zoo
"""

from __future__ import annotations

import argparse
from pathlib import Path

CHECKED_EXPLAINERS = ("saliency", "integrated_gradients", "lime")


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from gecobench.evaluation.checkpoints import reference_unit_name
    from gecobench.evaluation.data import load_split
    from gecobench.evaluation.modelling import load_model
    from gecobench.evaluation.published_reference import (
        load_published_references,
        write_bundle,
    )
    from gecobench.evaluation.runner import (
        EvaluationSettings,
        ExplainerSpec,
        checkpoint_key,
        reference_chunk_attributions,
        reference_chunk_rows,
    )
    from gecobench.explainers.base import get_explainer
    from gecobench.reference import ReferencePlan

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zoo", type=Path, required=True, help="a zoo folder with <config>/ZS/seed<seed>")
    parser.add_argument("--bundles", type=Path, default=ReferencePlan().attributions_dir,
                        help="the bundles to re-key, in place (default: reference/zero_shot_attributions)")
    parser.add_argument("--chunk", type=int, default=3, help="the chunk recomputed as the check (default: 3)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest error of a recomputed score relative to the sentence's largest (default: 1e-4)")
    args = parser.parse_args(argv)

    for bundle in load_published_references(args.bundles).by_unit.values():
        document = bundle.document
        config, seed = document["dataset"]["config"], document["attribution_protocol"]["seed"]
        zero_shot = load_model(args.zoo / config / "ZS" / f"seed{seed}")
        split = load_split(config, document["dataset"]["split"])
        if split.fingerprint != document["dataset"]["fingerprint"]:
            parser.error(f"{bundle.path}: written for other {config} data ({document['dataset']['fingerprint']})")
        settings = EvaluationSettings(seed=seed, chunk_size=document["attribution_protocol"]["chunk_size"],
                                      batch_size=document["attribution_protocol"]["batch_size"])
        if settings.attribution_protocol() != document["attribution_protocol"]:
            parser.error(f"{bundle.path}: attribution protocol {document['attribution_protocol']} is not "
                         f"{settings.attribution_protocol()}")
        rows = reference_chunk_rows(split, settings)[args.chunk]
        words = [list(split.rows[i].words) for i in rows]
        for text in CHECKED_EXPLAINERS:
            spec = ExplainerSpec.parse(text)
            explainer = get_explainer(spec.name, **spec.params)
            computed = reference_chunk_attributions(explainer, spec, zero_shot, split, rows, args.chunk, settings)
            published = bundle.chunk_scores(checkpoint_key(spec, explainer), args.chunk, rows, words)
            if published is None:
                parser.error(f"{bundle.path}: no chunk {args.chunk} of {text}")
            error = max(float(np.max(np.abs(np.asarray(c) - np.asarray(p))) / max(float(np.max(np.abs(p))), 1e-30))
                        for c, p in zip(computed, published))
            print(f"{config} seed {seed} {text}: largest error relative to the sentence's largest score {error:.2e}")
            if error > args.tolerance:
                parser.error(f"{bundle.path}: {zero_shot.path} does not compute its {text} attributions "
                             f"({error:.2e} > {args.tolerance:.0e}); not re-keyed")
        function_sha256 = zero_shot.function_sha256
        unit = reference_unit_name(function_sha256, split.fingerprint, document["attribution_protocol"])
        if unit == document["unit"]:
            print(f"{bundle.path}: already keyed by this fingerprint")
            continue
        rekeyed = {**document, "unit": unit,
                   "reference": {**document["reference"], "function_sha256": function_sha256},
                   "provenance": {**document["provenance"],
                                  "function_sha256_up_to_0_5": document["reference"]["function_sha256"]}}
        path = write_bundle(rekeyed, args.bundles)
        bundle.path.unlink()
        print(f"{bundle.path.name} -> {path.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
