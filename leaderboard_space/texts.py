"""The Space's prose: the About text, the legends, the submission guide, the citation (kept out of ``app.py``,
whose job is the layout and the callbacks). Definitions of columns, regimes and baselines are in
:mod:`leaderboard_space.glossary`; the links of the About tab are built here from the Space's Hub organisation."""

from __future__ import annotations

from gecobench.hub_publish import (
    LEADERBOARD_SPACE,
    REFERENCE_DATASET,
    REQUESTS_DATASET,
    RESULTS_DATASET,
)
from leaderboard_space import ranking

PAPER_TITLE = "GECOBench: A Gender-Controlled Text Dataset and Benchmark for Quantifying Biases in Explanations"
PAPER_URL = "https://arxiv.org/abs/2406.11547"
PAPER_JOURNAL = "Wilming et al., Frontiers in Artificial Intelligence (2025)"
AUTHORS_CODE_URL = "https://github.com/braindatalab/gecobench"
HUB = "https://huggingface.co"

#: Pairs of explainers that give identical numbers on the zoo's models, and why (shown when it happens).
IDENTICAL_PAIRS = {
    frozenset({"saliency", "guided_backprop"}): "Guided Backprop alters only the backward pass of ReLU modules; "
    "the zoo's models have none (MiniLM uses GELU), so it returns the absolute gradient — Saliency.",
    frozenset({"deeplift", "input_x_gradient"}): "DeepLift's rescale rule replaces the gradient of the "
    "non-linearities it supports only; with a zero baseline and none of those in the model it equals "
    "Input × Gradient.",
}

BIBTEX = r"""```bibtex
@article{wilming2025gecobench,
  title   = {GECOBench: A Gender-Controlled Text Dataset and Benchmark for Quantifying Biases in Explanations},
  author  = {Wilming, Rick and Dox, Artur and Schulz, Hjalmar and Oliveira, Marta and Clark, Benedict and Haufe, Stefan},
  journal = {Frontiers in Artificial Intelligence},
  year    = {2025}
}
```

```bibtex
@article{garridomunoz2023maria,
  title   = {{MarIA} and {BETO} are sexist: evaluating gender bias in large language models for {Spanish}},
  author  = {Garrido-Mu{\~n}oz, Ismael and Mart{\'\i}nez-Santiago, Fernando and Montejo-R{\'a}ez, Arturo},
  journal = {Language Resources and Evaluation},
  year    = {2023}
}
```

```bibtex
@article{nauta2023anecdotal,
  title   = {From Anecdotal Evidence to Quantitative Evaluation Methods: A Systematic Review on Evaluating Explainable {AI}},
  author  = {Nauta, Meike and Trienes, Jan and Pathak, Shreyasi and Nguyen, Elisa and Peters, Michelle and Schmitt, Yasmin and Schl{\"o}tterer, J{\"o}rg and van Keulen, Maurice and Seifert, Christin},
  journal = {ACM Computing Surveys},
  year    = {2023}
}
```"""

ABOUT_TEMPLATE = r'''
## The protocol

**GECOBench** asks whether an explanation of a language model points at the words that *actually* decide
the prediction. GECO sentences exist in gender variants that differ only in the gendered words; a model
trained to classify the gender can only rely on those words, so they are the ground truth. An explainer's
**mass accuracy (MA)** is the share of its attribution mass on ground-truth words. **log RMA** (relative
mass accuracy) is the median over sentences of ln(MA / MA_ZS), where MA_ZS is the same explainer's MA on the
zero-shot model of the same base, with the same random numbers for stochastic explainers (0: as correct as
zero-shot; model-independent baselines get exactly 0). The **MA gap** is MA(male) − MA(female) (and each
binary group minus non-binary on the non-binary configs), signed, with a paired bootstrap interval over
source sentences (an interval containing 0 means no detectable gap). Every explainer is scored for each model
(regime from scratch to fully fine-tuned, base model, seed) and each GECO configuration (all gendered words
altered, or the grammatical subject only; binary and non-binary), with 95% bootstrap confidence intervals over
sentences. The **Ranking** tab shows one model at a time: numbers of different models, regimes,
configurations or seeds are never averaged into one row there. The Co-12 property columns (MRC, SNC, LD, DMA,
SP, CVR) follow Nauta et al.'s Co-12 properties; AUPRC and Rank acc. score the order of the attributions.

**Two sources, never pooled.** The Space opens on the **reference results**: the package's own evaluation of
the built-in explainers on its model zoo, labelled with the package version and the base model its records name
(offline a MiniLM, not the paper's bert-base-uncased: the paper's protocol, not the paper's numbers). *Results
shown* switches every GECO view to **your results** (the store the Space was started on, where submissions land)
and back. *Sentences scored* keeps the paper's correctness filter (only sentences whose gender variants the
model all classifies correctly) and the unfiltered records apart: one at a time, the paper's first.

The **All models** tab has one row per explainer and model (regime × base model × config). Records are averaged
only over seeds of an otherwise identical protocol: *Seeds* says how many; with several, the value is the mean
over seeds and the interval the 95 % t-interval across seeds (cut to the metric's range). Rows that differ in
anything else (explainer parameters, sentences scored, filter, compared explainers…) stay separate, and
*Differs by* names the difference. *vs best* says whether the paired bootstrap interval of MA(best) − MA(row), on
the same sentences, includes 0 (*tie*) or not.

Baselines — *Uniform Random* and *Pattern Variant* — do not look at the model and are marked **[baseline]**;
Uniform Random's MA is the chance level drawn on the plots. Results submitted with pre-computed attributions
and not reproduced by the queue are marked **[self-reported]**.

The **Spanish model bias** tab scores masked language models on the templates of Garrido-Muñoz et al.: the
Bias Probability Index (BPI) and Bias Rank Index (BRI) per lexicon category, as male − female (blue = towards
male, red = towards female).

{links}

## Glossary

Every column, regime code and baseline; the same definitions appear when the pointer rests on a table header.

{glossary}

## How to cite

{bibtex}

## Versions

gecobench-hub {version} · record schema {schema} · Gradio {gradio_version}
'''

EMPTY_MESSAGE = (
    "**No results yet** in `{source}`. Write some with `gecobench evaluate --explainers saliency "
    "--models <checkpoint folder> --results {source}` (or `gecobench demo`), then press *Refresh results* — or point the "
    "Space at another store with `--results`, `GECOBENCH_RESULTS` (a folder) or `GECOBENCH_RESULTS_REPO` "
    "(a Hub dataset repo)."
)
RANKING_LEGEND = (
    "**Bold green**: best value of the column among the non-baseline explainers (gap: closest to 0). "
    f"**{ranking.NOT_SEPARATED_MARK}**: this explainer's MA is not distinguishable from the next one's — their 95% "
    "intervals overlap (the paired test replaces this check where the records carry one). "
    "**Gap m−f** = MA(male) − MA(female); on the non-binary configs also **Gap m−nb**, **Gap f−nb** (each binary "
    "group − non-binary) and **Largest |MA gap|**, the best gap over all of them being its smallest. The view "
    "*Gender gaps: every metric* shows every metric per group with every gap. Sort with a header's ⋮ menu; filter "
    "rows by any text (explainer, "
    "version, parameters, protocol) with the search box; the Rank and Explainer columns stay in view when scrolling "
    "sideways; click a header's name to sort by it. "
    "Definitions, ranges and directions: the Glossary below and on the About tab."
)
SUBMIT_GUIDE = """
### How a submission is scored
Two tracks, both scored by exactly the evaluation that scores the built-in explainers:

* **Code** (`.py`, at most 1 MiB): one file defining a class with a `name` (lower-case identifier), a `version` and
  `explain(self, model, tokenizer, words, targets)`. `words` is a batch of sentences as word lists, `targets` the
  class to explain per sentence; return one array of **one score per word** per sentence (or token scores folded to
  words with `gecobench.words`). The explainer never sees the ground truth. It runs in a sandbox without network,
  on the reference model set, and its MA, intervals, gap and Co-12 properties are computed by the queue.
  Download the template below (a complete, working explainer) and edit it.
* **Pre-computed** (`.jsonl` or `.parquet`, at most 64 MiB): one row per sentence variant with the fields
  `model`, `config`, `sentence_id`, `label` (the gender variant) and `attributions` (one finite number per word,
  in the GECO test split's word order). Shown as **[self-reported]** until the queue reproduces it.

**Model set**: leave empty for the queue's reference set; in pre-computed files `model` is the name of a checkpoint
folder of that set (the queue names a missing one in its reason). **Limits**: one request per name and version;
{limits} A run over a limit fails with the reason shown in the queue. **Waiting time**: requests run one at a time, each within the limits above, so a request waits at
most the wall-time limit for every request ahead of it in the queue, plus its own run.
When a request finishes, its MA appears in the queue's *score* column and its records on the Ranking tab.
"""


def about_links(org: str | None) -> str:
    """The About tab's links: the paper, the authors' code and, when the Space knows its Hub organisation (a
    published Space does), the datasets and the model zoo on the Hub. Never a path of the serving machine."""
    lines = ["## Links", "",
             f"* **Paper**: [{PAPER_TITLE}]({PAPER_URL}) — {PAPER_JOURNAL}; arXiv 2406.11547.",
             f"* **The authors' code**: [{AUTHORS_CODE_URL.removeprefix('https://')}]({AUTHORS_CODE_URL}).",
             ]
    if org:
        lines += [
            (f"* **Datasets**: [GECO]({HUB}/datasets/{org}/geco) · "
             f"[reference results]({HUB}/datasets/{org}/{REFERENCE_DATASET}) · "
             f"[results]({HUB}/datasets/{org}/{RESULTS_DATASET}) · "
             f"[requests]({HUB}/datasets/{org}/{REQUESTS_DATASET})."),
            f"* **This Space**: [{org}/{LEADERBOARD_SPACE}]({HUB}/spaces/{org}/{LEADERBOARD_SPACE}).",
            (f"* **Model cards**: every model of the zoo is a Hub model of [{org}]({HUB}/{org}) named "
             "`gecobench-<regime>-<config>-seed<N>`; the Ranking's *Model card* column links each row's."),
        ]
    else:
        lines += [("* **Datasets and model cards**: published on the Hugging Face Hub with `gecobench publish`; "
                   "this Space runs from local folders, so it links none (the Ranking's *Model card* column names "
                   "the card inside the checkpoint folder).")]
    return "\n".join(lines)


def about_markdown(org: str | None, glossary: str, version: str, schema: str, gradio_version: str) -> str:
    """The About tab."""
    return ABOUT_TEMPLATE.format(links=about_links(org), glossary=glossary, bibtex=BIBTEX, version=version,
                                 schema=schema, gradio_version=gradio_version)
