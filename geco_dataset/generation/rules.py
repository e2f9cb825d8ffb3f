"""The alteration rules as data: loading the tables in ``rule-tables/`` into one :class:`RuleSet`.

The tables (not code branches) decide which words change: ``pronouns.tsv`` (pronouns by role),
``neutral_nouns.tsv`` (gendered nouns and titles with a neutral counterpart), ``verb_agreement.json``
(verb agreement after "they", with a ``grammatical`` and a ``release`` profile), ``pronoun_case.json``
(subject or object pronoun for a first-name slot, and the words the release removed around it),
``release_verbs.tsv`` (the release's own verb forms, ``release`` profile) and ``neutral_names.tsv``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

# a folder name that is not an identifier: a data folder, never an importable (namespace) package, so the build
# does not mistake it for one, nor for this module
RULES_DIR = Path(__file__).resolve().parent / "rule-tables"
PROFILES = ("grammatical", "release")


def read_rule_table(path: Path) -> list[dict[str, str]]:
    """Rows of a TSV file with a header line; lines starting with ``#`` are comments."""
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t"))
    for number, row in enumerate(rows, start=2):
        if any(value is None or value == "" for value in row.values()):
            raise ValueError(f"{path.name}: row {number} ({row}) has an empty or missing column")
    return rows


@dataclass(frozen=True)
class RuleSet:
    """All alteration rules for one profile.

    ``pronoun_roles``: lower-cased gendered pronoun -> possible roles (``her`` and ``his`` have two).
    ``neutral_pronoun``: role -> neutral pronoun. ``gendered_pronoun``: (role, gender) -> pronoun.
    ``neutral_noun``: lower-cased ``male|female`` pair, male or female noun -> neutral noun.
    The verb fields come from ``verb_agreement.json`` (and ``release_verbs.tsv``), the name-slot fields
    (``object_after`` … ``determiners_dropped``) from ``pronoun_case.json``; the JSON comments explain each.
    """

    profile: str
    pronoun_roles: dict[str, tuple[str, ...]]
    neutral_pronoun: dict[str, str]
    gendered_pronoun: dict[tuple[str, str], str]
    neutral_noun: dict[str, str]
    verb_irregular: dict[str, str]
    verb_invariant: frozenset[str]
    adverbs_to_skip: frozenset[str]
    adverb_suffixes: tuple[str, ...]
    neutral_from_source_word: dict[str, str]
    verb_table: dict[str, str]
    surface: dict[str, str]
    skip_adverbs: bool
    suffix_rules: tuple[tuple[str, str], ...]
    object_after: frozenset[str]
    verb_suffixes: tuple[str, ...]
    min_verb_length: int
    subject_if_next: frozenset[str]
    not_verbs: frozenset[str]
    subject_if_next_unless_previous_ends: tuple[str, ...]
    not_verb_suffixes: tuple[str, ...]
    titles: frozenset[str]
    object_after_infinitive: frozenset[str]
    kin_nouns: frozenset[str]
    articles: frozenset[str]
    articles_at_start: frozenset[str]
    determiners_dropped: frozenset[str]
    neutral_subjects: frozenset[str] = field(default_factory=lambda: frozenset({"they"}))

    def neutral_for(self, word: str, female: str | None = None) -> str | None:
        """The neutral counterpart of a gendered noun or title (capitalisation kept), or None.

        With ``female``, the (male, female) pair is looked up first (``Sir``/``Madame`` -> ``noble``); of the
        male and the female entries the longer wins (``Mr``/``Mrs.`` -> ``Mx.``).
        """
        template = word.strip()
        candidates = []
        if female is not None:
            candidates.append(self.neutral_noun.get(f"{template.lower()}|{female.strip().lower()}"))
        if not candidates or candidates[0] is None:
            candidates = [self.neutral_noun.get(template.lower())]
            if female is not None:
                candidates.append(self.neutral_noun.get(female.strip().lower()))
        found = [c for c in candidates if c is not None]
        if not found:
            return None
        neutral = found[0]
        if len(found) > 1 and found[1].startswith(found[0]):
            neutral = found[1]
        return match_case(template or (female or "").strip(), neutral)

    def name_role(self, words: list[str], position: int) -> str:
        """``subject`` or ``object``: the role a pronoun takes when it replaces the name at ``position``."""
        previous = words[position - 1] if position > 0 else ""
        following = words[position + 1].lower() if position + 1 < len(words) else ""
        participle = previous.lower().endswith(self.subject_if_next_unless_previous_ends)
        if (following in self.subject_if_next and not participle) or (self.looks_like_verb(following) and following.endswith("s")):
            return "subject"
        before_previous = words[position - 2].lower() if position > 1 else ""
        if before_previous in self.object_after_infinitive and previous.isalpha() and previous.islower():
            return "object"
        if previous.lower() in self.object_after and previous[:1].islower():
            return "object"
        return "object" if self.looks_like_verb(previous) else "subject"

    def looks_like_verb(self, word: str) -> bool:
        """A lower-case word with a verb ending (``-s``, ``-ing``) that is not a known non-verb."""
        return (word.isalpha() and word.islower() and len(word) >= self.min_verb_length
                and word.endswith(self.verb_suffixes) and word not in self.not_verbs
                and not word.endswith(self.not_verb_suffixes))

    def name_slot_drops(self, words: list[str], name_positions: set[int]) -> set[int]:
        """Word positions a pronoun-for-name replacement removes (see ``pronoun_case.json``)."""
        drops: set[int] = set()
        for start in sorted(name_positions):
            if start - 1 in name_positions:
                drops.add(start)  # the rest of a multi-word name
                continue
            previous = words[start - 1] if start > 0 else ""
            end = start
            while end in name_positions:
                end += 1
            following = words[end] if end < len(words) else ""
            if previous.lower() in self.kin_nouns:
                drops.update(range(start, end))
            elif (previous == "," and start >= 2 and words[start - 2].lower() in self.kin_nouns
                  and following == ","):
                drops.update(range(start, end + 1))
            elif start == 1 and previous.lower() in self.titles:
                drops.add(0)
            elif previous.lower() in self.determiners_dropped:
                drops.add(start - 1)
            elif start >= 2 and previous.isalpha() and previous.islower() and previous not in self.object_after \
                    and not self.looks_like_verb(previous) and (
                        words[start - 2].lower() in self.articles
                        or (start == 2 and words[0].lower() in self.articles_at_start)):
                drops.update({start - 2, start - 1})
        return drops

    def plural_verb(self, verb: str) -> str:
        """Third person singular -> plural (``visits`` -> ``visit``) by the irregular table, then suffix rules."""
        lower = verb.lower()
        if lower in self.verb_table:
            return match_case(verb, self.verb_table[lower])
        if lower in self.verb_irregular:
            return match_case(verb, self.verb_irregular[lower])
        if lower in self.verb_invariant:
            return verb
        for suffix, replacement in self.suffix_rules:
            if lower.endswith(suffix) and len(lower) > len(suffix):
                return verb[: len(verb) - len(suffix)] + replacement
        return verb


def match_case(template: str, word: str) -> str:
    """``word`` with the capitalisation of ``template`` (first letter only; ``Mx.`` keeps its own)."""
    if template[:1].isupper() and word[:1].islower():
        return " ".join(part[:1].upper() + part[1:] for part in word.split(" "))
    if template[:1].islower() and word[:1].isupper() and not word.startswith("Mx") and not word.startswith("LGBT") \
            and not word.startswith("French") and not word.startswith("St."):
        return word[:1].lower() + word[1:]
    return word


@lru_cache(maxsize=4)
def load_rules(profile: str = "grammatical", rules_dir: str | None = None) -> RuleSet:
    """Load the rule tables for ``profile`` (``grammatical`` or ``release``) from ``rules_dir``."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    root = Path(rules_dir) if rules_dir else RULES_DIR
    roles: dict[str, list[str]] = {}
    neutral_pronoun: dict[str, str] = {}
    gendered: dict[tuple[str, str], str] = {}
    for row in read_rule_table(root / "pronouns.tsv"):
        role = row["role"]
        neutral_pronoun[role] = row["neutral"]
        for gender in ("male", "female"):
            gendered[(role, gender)] = row[gender]
            roles.setdefault(row[gender].lower(), []).append(role)
    nouns: dict[str, str] = {}
    for row in read_rule_table(root / "neutral_nouns.tsv"):
        nouns.setdefault(f"{row['male'].lower()}|{row['female'].lower()}", row["neutral"])
        for column in ("male", "female"):
            nouns.setdefault(row[column].lower(), row["neutral"])
    verbs = json.loads((root / "verb_agreement.json").read_text(encoding="utf-8"))
    chosen = verbs["profiles"][profile]
    verb_table: dict[str, str] = {}
    if chosen.get("verb_table"):
        verb_table = {row["singular"].lower(): row["release"] for row in read_rule_table(root / chosen["verb_table"])}
    case = json.loads((root / "pronoun_case.json").read_text(encoding="utf-8"))
    return RuleSet(
        profile=profile,
        pronoun_roles={word: tuple(dict.fromkeys(r)) for word, r in roles.items()},
        neutral_pronoun=neutral_pronoun,
        gendered_pronoun=gendered,
        neutral_noun=nouns,
        verb_irregular={**verbs["irregular"], **chosen.get("irregular_extra", {})},
        verb_invariant=frozenset(verbs["invariant"]),
        adverbs_to_skip=frozenset(verbs["adverbs_to_skip"]),
        adverb_suffixes=tuple(verbs["adverb_suffixes"]),
        neutral_from_source_word=dict(chosen["neutral_from_source_word"]),
        verb_table=verb_table,
        surface=dict(chosen["surface"]),
        skip_adverbs=bool(chosen["skip_adverbs"]),
        suffix_rules=tuple((s, r) for s, r in chosen["suffix_rules"]),
        object_after=frozenset(case["object_after"]),
        verb_suffixes=tuple(case["verb_suffixes"]),
        min_verb_length=int(case["min_verb_length"]),
        subject_if_next=frozenset(case["subject_if_next"]),
        not_verbs=frozenset(case["not_verbs"]),
        subject_if_next_unless_previous_ends=tuple(case["subject_if_next_unless_previous_ends"]),
        not_verb_suffixes=tuple(case["not_verb_suffixes"]),
        titles=frozenset(case["titles"]),
        object_after_infinitive=frozenset(case["object_after_infinitive"]),
        kin_nouns=frozenset(case["kin_nouns"]),
        articles=frozenset(case["articles"]),
        articles_at_start=frozenset(case["articles_at_start"]),
        determiners_dropped=frozenset(case["determiners_dropped"]),
        neutral_subjects=frozenset(verbs["subject_pronouns"]),
    )
