"""Definitions shown on the Space: every metric with what it measures, its range and which way is better."""

from __future__ import annotations

#: (abbreviation, name, definition, range, better)
GLOSSARY: list[tuple[str, str, str, str, str]] = [
    ("MA", "Mass accuracy", ("Share of an explanation's absolute attribution mass on the ground-truth (gendered) "
     "words, averaged over sentences."), "0 … 1", "higher"),
    ("RMA", "Relative mass accuracy", ("Median over sentences of ln(MA / MA of the same explainer on the zero-shot "
     "reference model); > 0: more mass on the ground truth than on the reference."), "−∞ … ∞ (0 = as the reference)",
     "higher"),
    ("Gap m−f", "Gender gap", ("MA on male sentences minus MA on female sentences; negative: the explanation "
     "finds the gendered words less well for men."), "−1 … 1", "closest to 0"),
    ("Gap m−nb, Gap f−nb", "Gender gaps to non-binary", ("On the non-binary configs: MA on male (female) sentences "
     "minus MA on non-binary sentences, paired over source sentences."), "−1 … 1", "closest to 0"),
    ("Largest |MA gap|", "Best gap over every gap", ("The largest absolute MA gap of the config (male−female and "
     "each binary group − non-binary); the smallest is the best gap."), "0 … 1", "lower"),
    ("Gender gaps view", "Every metric by gender", ("Each metric's value on the female, male (and non-binary) "
     "variants, and every signed gap metric(a) − metric(b) with its paired interval over source sentences; read a "
     "gap with the metric's direction. Property and faithfulness metrics computed on the first N source sentences "
     "say so in *Sentences*."), "metric's range", "gap closest to 0"),
    ("MRC", "Model randomisation check", ("How much the explanation changes when the model's weights are "
     "re-initialised (Co-12 *correctness*); an explanation that does not change ignores the model."), "0 … 1",
     "higher"),
    ("SNC", "Small noise check", ("How much the explanation changes under small noise on the input embeddings "
     "(Co-12 *continuity*)."), "0 … 1", "lower"),
    ("LD", "Label difference", ("How much the explanation changes when another class is explained (Co-12 "
     "*contrastivity*)."), "0 … 1", "higher"),
    ("DMA", "Different methods agreement", ("Agreement of the explanation with the other explainers' (Co-12 "
     "*coherence*; total variation, so lower = closer)."), "0 … 1", "lower"),
    ("SP", "Sparsity", "How concentrated the attribution mass is on few words (Co-12 *compactness*).", "0 … 1",
     "higher"),
    ("CVR", "Covariate complexity", "Entropy of the normalised attributions (Co-12 *covariate complexity*).",
     "0 … 1", "lower"),
    ("AUPRC", "Area under the precision-recall curve", ("How well the attribution order separates ground-truth "
     "words from the others."), "0 … 1", "higher"),
    ("RRA", "Relevance rank accuracy (Rank acc.)", ("Share of the ground-truth words among the top-k attributed "
     "words, k = number of ground-truth words."), "0 … 1", "higher"),
]


def glossary_markdown() -> str:
    """The glossary as a Markdown table."""
    lines = ["| Metric | Name | Definition | Range | Better |", "|---|---|---|---|---|"]
    lines += [f"| **{abbr}** | {name} | {definition} | {span} | {better} |"
              for abbr, name, definition, span, better in GLOSSARY]
    return "\n".join(lines)
