"""The model card (``README.md``) written next to every zoo checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAPER_CITATION = (
    "Wilming, R., Dox, A., Schulz, H., Oliveira, M., Clark, B., Haufe, S. (2025). GECOBench: A Gender-Controlled "
    "Text Dataset and Benchmark for Quantifying Biases in Explanations. Frontiers in Artificial Intelligence."
)


def _pct(value: Any) -> str:
    return f"{100 * value:.2f}%" if isinstance(value, (int, float)) else "n/a"


def _head_rate(info: dict[str, Any]) -> str:
    """`` (head 0.002)`` when the classification head trained at its own learning rate, else nothing."""
    head = info.get("head_learning_rate")
    return f" (head {head})" if head is not None and head != info.get("learning_rate") else ""


def render_model_card(info: dict[str, Any]) -> str:
    """Markdown with Hub YAML front matter from a checkpoint's ``gecobench_model.json`` content."""
    regime = info["regime"]
    zs = f"\n- **Zero-shot method:** {info['zero_shot_method']}" if info.get("zero_shot_method") else ""
    training = info.get("training") or {}
    schedule = info.get("schedule") or {}
    return f"""---
library_name: transformers
license: bsd-3-clause
pipeline_tag: text-classification
tags:
- gecobench
- gender
- explainability
- regime-{regime}
metrics:
- accuracy
---

# GECOBench zoo model: {regime} on GECO `{info['geco_config']}` (seed {info['seed']})

A gender classifier of the GECOBench Hub model zoo, used to test whether explanation methods find the words
that carry gender, and whether a pretrained model's gender bias leaks into its explanations.

- **Regime:** `{regime}` — {info.get('regime_description', '')}{zs}
- **Architecture:** {info.get('architecture')} ({info.get('trainable_parameters')} of {info.get('total_parameters')} parameters trained)
- **Base model:** {info['base_model']} (revision `{info['base_revision']}`)
- **Data:** GECO `{info['geco_config']}`; validation = {schedule.get('val_fraction', 'n/a')} of the training sentences
  held out by sentence id (all gender variants of a sentence on one side)
- **Labels:** {', '.join(f'{i}={n}' for i, n in enumerate(info.get('labels', [])))}
- **Seed:** {info['seed']}
- **Validation accuracy:** {_pct(info.get('val_accuracy'))} ({info.get('n_val')} sentences)
- **Test accuracy:** {_pct(info.get('test_accuracy'))} ({info.get('n_test')} sentences, GECO test split)
- **Training:** {training.get('steps', 0)} steps, {training.get('epochs_run', 0)} epochs, learning rate
  {info.get('learning_rate')}{_head_rate(info)}, batch {schedule.get('batch_size')}, max length {schedule.get('max_length')}, best
  checkpoint by validation loss at step {training.get('best_step')}; {info.get('num_processes')} process(es)
- **Training time:** {info.get('training_time_s')} s
- **Package:** gecobench-hub {info.get('package_version')} (git `{(info.get('provenance') or {}).get('git_commit', 'unknown')}`)

## Use

```python
from gecobench.models import load_zoo_model
model, tokenizer, info = load_zoo_model("path/or/downloaded/folder")
```

Trained regimes also load with `transformers.AutoModelForSequenceClassification.from_pretrained(folder)`
(OLA and zero-shot folders after `import gecobench.models`, which registers their classes). Tokenize the
released words with `is_split_into_words=True`.

## Limitations

GECO sentences are English Wikipedia plot-summary sentences with gender-controlled variants; the model is a
benchmark instrument, not a general gender classifier, and must not be used to infer anyone's gender.

## Citation

{PAPER_CITATION}
"""


def write_model_card(folder: str | Path, info: dict[str, Any]) -> Path:
    """Write ``README.md`` into ``folder`` and return its path."""
    path = Path(folder) / "README.md"
    path.write_text(render_model_card(info), encoding="utf-8")
    return path
