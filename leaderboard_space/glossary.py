"""Definitions shown on the Space: every metric with what it measures, its range and which way is better; every
other column of its tables; the model regimes and the baselines. The Glossary accordion, the About tab and the
tooltips on the table headers (``title`` attributes, see :func:`header_definitions`) read them from here."""

from __future__ import annotations

import re

#: (abbreviation, name, definition, range, better)
GLOSSARY: list[tuple[str, str, str, str, str]] = [
    ("MA", "Mass accuracy", ("Share of an explanation's absolute attribution mass on the ground-truth (gendered) "
     "words, averaged over sentences."), "0 … 1", "higher"),
    ("log RMA", "Log relative mass accuracy", ("Median over sentences of ln(MA / MA of the same explainer on the "
     "zero-shot (ZS) model of the same base); > 0: more mass on the ground truth than the zero-shot model. Empty "
     "on ZS (it is the reference) and on OLA (trained from scratch: no pretrained base, so no zero-shot "
     "model)."), "−∞ … ∞ (0 = as zero-shot)", "higher"),
    ("Gap m−f", "Gender gap", ("MA on male sentences minus MA on female sentences, paired over source sentences; "
     "negative: the explanation finds the gendered words less well for men."), "−1 … 1", "closest to 0"),
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
    ("Rank acc.", "Relevance rank accuracy (RRA)", ("Share of the ground-truth words among the top-k attributed "
     "words, k = number of ground-truth words."), "0 … 1", "higher"),
    ("Compr.", "Comprehensiveness", ("Drop of the model's probability for the explained class when the most "
     "attributed words are removed, averaged over removal fractions 0.1 … 1.0 (AOPC; faithfulness: removing "
     "what matters should hurt)."), "−1 … 1", "higher"),
    ("Suff.", "Sufficiency", ("Drop of the model's probability for the explained class when only the most "
     "attributed words are kept, averaged over the fractions 0.1 … 1.0 (AOPC; faithfulness: what matters "
     "should suffice)."), "−1 … 1", "lower"),
    ("LOO tau", "Leave-one-out Kendall τ", ("Rank correlation between the attributions and the change of the "
     "model's output when each word alone is left out (faithfulness)."), "−1 … 1", "higher"),
]

#: The model regimes (the GECOBench authors' training schemes; ``docs/models.md``), in the Space's order.
REGIMES: dict[str, str] = {
    "OLA": "One-layer attention model trained from scratch on GECO (no pretrained base, so no zero-shot "
           "reference: log RMA is empty).",
    "ZS": "Zero-shot: the pretrained base model with an untrained classification head, nothing trained (the "
          "reference of log RMA, whose own value is therefore empty).",
    "C": "Only the new classification layer trained; embeddings, encoder and pretrained pooler frozen.",
    "CE": "Embeddings re-initialised at random and trained with the classifier; encoder and pooler frozen.",
    "CEf": "Pretrained embeddings fine-tuned with the classifier; encoder and pooler frozen.",
    "CEfAf": "Everything fine-tuned: embeddings, every encoder layer, pooler and classifier.",
}

#: The baselines: model-independent explainers, marked [baseline] and never counted as the best explainer.
BASELINES: dict[str, str] = {
    "Pattern Variant": "The authors' covariance baseline (Haufe et al., 2014): the covariance of tf-idf word "
                       "features with the labels of the sentences explained. It never looks at the model; its "
                       "high MA shows how far the label alone points at the gendered words — an upper reference, "
                       "not an explainer to beat.",
    "Uniform Random": "Uniform random attributions per word piece, summed per word: the chance level of MA "
                      "(the dashed line on the plots).",
}

#: Every other column of the Space's tables (ranking, gender gaps, pivot, All models), by its header.
COLUMNS: dict[str, str] = {
    "Rank": "Position by MA among the rows of this model, best first (baselines included, marked [baseline]).",
    "Explainer": "The attribution method scored; [baseline]: model-independent (see Baselines), "
                 "[self-reported]: submitted attributions not reproduced by the queue.",
    "vs next": "≈ next: this row's MA is not distinguishable from the next row's (95% intervals overlap, or the "
               "paired test says so where the records carry it).",
    "Largest gap": "Which pair of groups gives the largest absolute gap of the row.",
    "Largest |gap|": "The largest absolute gap of the row over every pair of groups.",
    "Version": "The explainer's version: a new version is a new row, never pooled with the old.",
    "Versions": "The explainer versions the row's records carry.",
    "Parameters": "The explainer's parameters as recorded.",
    "Seed": "The model's training seed.",
    "Seeds": "How many seeds of an otherwise identical protocol the row averages (mean; interval = 95% "
             "t-interval across seeds, cut to the metric's range, when there are several).",
    "Records": "How many records the row stands for.",
    "Sentences scored": "Sentence variants the metrics were computed on, after the correctness filter.",
    "Sentences": "Source sentences the metric was computed on (properties and faithfulness may use the first N).",
    "Model accuracy": "The model's classification accuracy on the sentences scored.",
    "Model": "The checkpoint scored (name and weights hash).",
    "Model card": "Link to the model's card (the Hub model page when published).",
    "Dataset": "GECO configuration and split the sentences come from.",
    "Dataset card": "Link to the GECO dataset card (the Hub dataset page when published).",
    "Protocol": "Evaluation settings that must match for two rows to be compared (filter, bootstrap, ...).",
    "Record": "Where the row's record file is: its page on the results dataset, or its id in the store.",
    "Kind": "built-in explainer, baseline, submission or self-reported.",
    "Config": "GECO configuration: binary or non-binary gender, all gendered words altered or the subject only.",
    "Regime": "The model's training regime (see Regimes).",
    "Base model": "The pretrained model the regime starts from (OLA: none).",
    "Differs by": "What separates this row from others of the same explainer and model (parameters, filter, "
                  "sentences scored, ...): such rows are never averaged.",
    "vs best": "Whether the paired bootstrap interval of MA(best) − MA(row) on the same sentences includes 0 "
               "(tie) or not (lower); the best is the best real explainer, baselines excluded.",
    "Metric": "The metric of the row (see the metric definitions).",
    "Direction": "Which way the metric is better: higher, lower or closest to 0.",
    "female": "The metric on the female variants of the sentences.",
    "male": "The metric on the male variants of the sentences.",
    "non-binary": "The metric on the non-binary variants (non-binary configs only).",
    "MA female": "MA on the female variants of the sentences.",
    "MA male": "MA on the male variants of the sentences.",
    "MA non-binary": "MA on the non-binary variants (non-binary configs only).",
    "s / sentence": "Seconds of explainer time per sentence variant, as measured by the run (machine-dependent).",
    "Sentence": "The GECO source sentence and gender variant shown.",
}

#: Header spellings of the same metric in the Space's tables (the All models tab writes gaps in full).
ALIASES: dict[str, str] = {
    "RMA": "log RMA", "RRA": "Rank acc.", "MA gap": "Gap m−f", "MA gap male−female": "Gap m−f",
    "Gap male−female": "Gap m−f", "MA gap male−non-binary": "Gap m−nb, Gap f−nb",
    "MA gap female−non-binary": "Gap m−nb, Gap f−nb", "Gap m−nb": "Gap m−nb, Gap f−nb",
    "Gap f−nb": "Gap m−nb, Gap f−nb", "Gap male−non-binary": "Gap m−nb, Gap f−nb",
    "Gap female−non-binary": "Gap m−nb, Gap f−nb",
}
_INTERVAL = re.compile(r"^(?P<column>.+?) (?:95% CI|lo|hi|ci_low|ci_high)$")


def _metric_text(abbreviation: str) -> str | None:
    for abbr, name, definition, span, better in GLOSSARY:
        if abbr == abbreviation:
            return f"{name}: {definition} Range {span}; better: {better}."
    return None


def definition(header: str) -> str | None:
    """The definition of a table header as the Space shows it (``MA``, ``MA 95% CI``, ``Gap m−nb``, ``CEf``,
    ``Kind``…), or None when the glossary has none (a test asks every shown header to have one)."""
    header = header.strip()
    match = _INTERVAL.match(header)
    if match:
        inner = definition(match["column"])
        return f"95% bootstrap confidence interval of {match['column']}. {inner}" if inner else None
    text = _metric_text(ALIASES.get(header, header))
    if text:
        return text
    if header in COLUMNS:
        return COLUMNS[header]
    if header in REGIMES:
        return f"Regime {header}: {REGIMES[header]}"
    # the columns the tables declare (gecobench.columns): one definition for the Space, downloads and the CLI
    from gecobench.columns import definitions as declared_definitions

    return declared_definitions().get(header)


def header_definitions(headers: list[str]) -> dict[str, str]:
    """{header: definition} for the headers the glossary defines (the page's tooltips)."""
    return {h: text for h in headers if (text := definition(h)) is not None}


def all_definitions() -> dict[str, str]:
    """Every header spelling the glossary knows, with its definition: what the page's tooltip script is given."""
    names = [abbr for abbr, *_ in GLOSSARY] + list(ALIASES) + list(COLUMNS) + list(REGIMES)
    names += [f"{n} 95% CI" for n in [abbr for abbr, *_ in GLOSSARY] + list(ALIASES)]
    return header_definitions(names)


def glossary_markdown() -> str:
    """The glossary as Markdown tables: the metrics, the regime codes, the baselines and the other columns."""
    lines = ["| Metric | Name | Definition | Range | Better |", "|---|---|---|---|---|"]
    lines += [f"| **{abbr}** | {name} | {text} | {span} | {better} |"
              for abbr, name, text, span, better in GLOSSARY]
    lines += ["", "| Regime | What the model is |", "|---|---|"]
    lines += [f"| **{code}** | {text} |" for code, text in REGIMES.items()]
    lines += ["", "| Baseline | What it is |", "|---|---|"]
    lines += [f"| **{name}** | {text} |" for name, text in BASELINES.items()]
    lines += ["", "| Column | Meaning |", "|---|---|"]
    lines += [f"| **{name}** | {text} |" for name, text in COLUMNS.items()]
    return "\n".join(lines)
