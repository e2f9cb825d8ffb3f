"""The GECO alteration engine: from a labelled source sentence to gendered variants and ground truth.

A :class:`SourceSentence` holds the original words and, per version (``all`` = D_A, ``subj`` = D_S) and
gender, the replacement word at each altered position. :func:`make_variants` applies them, derives the
non-binary variant by the rule tables when it is not given, and :func:`ground_truth` marks every word
that differs between the variants (Wilming et al., GECOBench, Frontiers in AI 2025).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from geco_dataset.generation.rules import RuleSet, load_rules, match_case

VERSIONS = ("all", "subj")
GENDERS = ("male", "female", "neutral")
TARGETS = {"female": 0, "male": 1, "neutral": 2}


class GenerationError(ValueError):
    """Bad input for the generation: the message names the sentence id (and file/line when known)."""


@dataclass
class SourceSentence:
    """One labelled source sentence.

    ``versions[version][gender]`` maps a word position to its replacement in that variant; a gender that is
    absent (typically ``neutral``) is derived by the rules. ``origin`` says where the sentence came from
    (file and line or JSON id) for error messages.
    """

    sentence_id: int
    words: list[str]
    versions: dict[str, dict[str, dict[int, str]]]
    origin: str = ""
    dropped: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def where(self) -> str:
        return f"sentence {self.sentence_id}" + (f" ({self.origin})" if self.origin else "")


def apply_replacements(source: SourceSentence, replacements: dict[int, str]) -> list[str]:
    """The source words with ``replacements`` applied; an empty string keeps the source word (the released
    labelling uses it for "no change"; any other text, even a blank, is taken as the word, as the release does)."""
    words = list(source.words)
    for position, replacement in replacements.items():
        if not 0 <= position < len(words):
            raise GenerationError(
                f"{source.where()}: replacement position {position} is outside the sentence "
                f"({len(words)} words)"
            )
        if replacement != "":
            words[position] = replacement
    return words


def _pronoun_role(words_male: list[str], words_female: list[str], position: int, source_word: str,
                  rules: RuleSet) -> str | None:
    """The grammatical role of the gendered pronoun at ``position``, or None if neither variant has one.

    ``her`` is ambiguous (object or possessive); the male counterpart (``him`` / ``his``) settles it, else
    the next word does.
    """
    male, female = words_male[position].strip().lower(), words_female[position].strip().lower()
    male_roles, female_roles = rules.pronoun_roles.get(male, ()), rules.pronoun_roles.get(female, ())
    if male_roles and female_roles:
        # his/her -> possessive, him/her -> object, his/hers -> possessive pronoun
        candidates = [role for role in male_roles if role in female_roles] or list(male_roles)
    else:
        candidates = list(male_roles or female_roles)
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    if "possessive" in candidates and _reads_as_determiner(words_female, position):
        return "possessive"
    others = [role for role in candidates if role != "possessive"]
    return others[0] if others else candidates[0]


_NOT_A_NOUN_START = {".", ",", ";", ":", "!", "?", ")", "(", "\"", "'", "and", "or", "but", "to", "in", "on", "at",
                     "for", "from", "with", "by", "of", "that", "as", "into", "about", "after", "before", "when",
                     "while", "because", "so", "up", "out", "down", "off", "away", "back", "again", "too", "the",
                     "a", "an", "''", "``", "-", "--"}


def _reads_as_determiner(words: list[str], position: int) -> bool:
    """``her`` followed by a word that can start a noun phrase reads as a possessive determiner."""
    if position + 1 >= len(words):
        return False
    return words[position + 1].strip().lower() not in _NOT_A_NOUN_START


def neutral_word(source: SourceSentence, male: list[str], female: list[str], position: int,
                 rules: RuleSet, strict: bool = True) -> str:
    """The non-binary word at an altered position: pronoun by role, else the neutral noun table."""
    role = _pronoun_role(male, female, position, source.words[position], rules)
    template = male[position].strip() or female[position].strip()
    if role is not None:
        # Capitalisation follows the pronoun, not a name in the other variant ("Tom" / "her" -> "their").
        pronouns = [w.strip() for w in (male[position], female[position]) if rules.pronoun_roles.get(w.strip().lower())]
        template = pronouns[0] if pronouns else template
        quirk = rules.neutral_from_source_word.get(source.words[position].strip().lower())
        if quirk is not None and rules.pronoun_roles.get(male[position].strip().lower()):
            return match_case(template, quirk)
        return match_case(template, rules.neutral_pronoun[role])
    neutral = rules.neutral_for(male[position], female[position])
    if neutral is not None:
        return rules.surface.get(neutral, neutral)
    message = (f"{source.where()}: no non-binary rule for the altered word {male[position]!r}/"
               f"{female[position]!r} at position {position}; add it to neutral_nouns.tsv or give the neutral "
               f"variant explicitly")
    if strict:
        raise GenerationError(message)
    source.notes.append(message)
    return male[position]


def agree_verbs(words: list[str], subject_positions: list[int], rules: RuleSet) -> list[str]:
    """Plural verb agreement after each neutral subject pronoun (``they visits`` -> ``they visit``)."""
    out = list(words)
    for position in subject_positions:
        target = position + 1
        if rules.skip_adverbs:
            while target < len(out) and (out[target].lower() in rules.adverbs_to_skip
                                         or out[target].lower().endswith(rules.adverb_suffixes)):
                target += 1
        if target < len(out) and out[target][:1].isalpha():
            out[target] = rules.plural_verb(out[target])
    return out


def derive_neutral(source: SourceSentence, male: list[str], female: list[str], rules: RuleSet,
                   strict: bool = True, explicit: dict[int, str] | None = None) -> list[str]:
    """The non-binary variant: every word that differs between male and female gets its neutral form.

    ``explicit`` (position -> word) overrides the rules at those positions (a user's own neutral word, or a
    word the labelling gives for the neutral variant); verbs then agree with every neutral subject pronoun.
    """
    if len(male) != len(female):
        raise GenerationError(f"{source.where()}: male and female variants differ in length "
                              f"({len(male)} vs {len(female)} words)")
    explicit = {p: w for p, w in (explicit or {}).items() if w.strip()}
    for position in explicit:
        if not 0 <= position < len(male):
            raise GenerationError(f"{source.where()}: neutral replacement position {position} is outside the "
                                  f"sentence ({len(male)} words)")
    neutral = list(male)
    subjects: list[int] = []
    for position, (m, f) in enumerate(zip(male, female)):
        if m == f and position not in explicit:
            continue
        if position in explicit:
            neutral[position] = explicit[position]
        else:
            neutral[position] = neutral_word(source, male, female, position, rules, strict=strict)
        if neutral[position].lower() in rules.neutral_subjects:
            subjects.append(position)
    agreed = agree_verbs(neutral, subjects, rules)
    for position, word in explicit.items():
        agreed[position] = word
    return agreed


def make_variants(source: SourceSentence, rules: RuleSet | None = None, strict: bool = True
                  ) -> dict[str, dict[str, list[str]]]:
    """``{version: {gender: words}}`` for D_A (``all``) and D_S (``subj``); neutral derived by the rules.

    Neutral replacements given in the labelling override the rules at their positions.
    """
    rules = rules or load_rules()
    out: dict[str, dict[str, list[str]]] = {}
    for version, by_gender in source.versions.items():
        if version not in VERSIONS:
            raise GenerationError(f"{source.where()}: unknown version {version!r} (expected one of {VERSIONS})")
        for gender in ("male", "female"):
            if gender not in by_gender:
                raise GenerationError(f"{source.where()}: version {version!r} has no {gender!r} labelling")
        variants = {gender: apply_replacements(source, by_gender[gender]) for gender in ("male", "female")}
        variants["neutral"] = derive_neutral(source, variants["male"], variants["female"], rules, strict,
                                             explicit=by_gender.get("neutral"))
        out[version] = {gender: _drop(source, words) for gender, words in variants.items()}
    return out


def _drop(source: SourceSentence, words: list[str]) -> list[str]:
    """Remove the ``dropped`` positions; a new first word takes the capital of the old one."""
    if not source.dropped:
        return words
    kept = [word for position, word in enumerate(words) if position not in source.dropped]
    if 0 in source.dropped and kept and words[0][:1].isupper():
        kept[0] = kept[0][:1].upper() + kept[0][1:]
    return kept


def ground_truth(variants: dict[str, list[str]], source: SourceSentence | None = None) -> list[int]:
    """1 where the word differs between any two of the given variants, else 0."""
    lengths = {gender: len(words) for gender, words in variants.items()}
    if len(set(lengths.values())) != 1:
        where = source.where() if source else "sentence"
        raise GenerationError(f"{where}: variants have different lengths {lengths}")
    columns = zip(*variants.values())
    return [int(len(set(column)) > 1) for column in columns]


def check_has_gendered_word(source: SourceSentence, variants: dict[str, dict[str, list[str]]]) -> None:
    """Raise when no version of the sentence alters any word (nothing for an explanation to find)."""
    if not any(any(ground_truth(by_gender, source)) for by_gender in variants.values()):
        raise GenerationError(f"{source.where()}: no gendered word: the male and female variants are identical")


def sentence_rows(source: SourceSentence, variants: dict[str, dict[str, list[str]]]
                  ) -> dict[str, list[dict]]:
    """Rows in the released jsonl layout for the four configs (``binary_gender_all`` …)."""
    configs = {}
    for version, by_gender in variants.items():
        binary = {g: by_gender[g] for g in ("male", "female")}
        for prefix, chosen in (("binary", binary), ("non_binary", by_gender)):
            truth = ground_truth(chosen, source)
            configs[f"{prefix}_gender_{version}"] = [
                {"sentence": words, "ground_truth": truth, "gender": gender, "target": TARGETS[gender],
                 "sentence_idx": source.sentence_id}
                for gender, words in chosen.items()
            ]
    return configs
