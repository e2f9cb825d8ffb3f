"""Readers: the released GECO labelling JSON (with name lists), inline markup and JSONL.

All readers return :class:`~geco_dataset.generation.engine.SourceSentence` objects; every error names the
file and the sentence id (or line).

Inline markup (one sentence per line; ``#`` starts a comment line; an optional ``<id><TAB>`` prefix sets the
sentence id, otherwise the line number is used)::

    [*He|She|They] loves [his|her|their] cat .

A group ``[male|female]`` or ``[male|female|neutral]`` is one altered word (it may contain spaces, e.g.
``[uncle|aunt|parent's sibling]``). A leading ``*`` marks the grammatical subject: D_S (``subj``) alters only
the marked groups, the other groups keep their male (first) form there; D_A (``all``) alters every group.
Without a neutral option the non-binary word comes from the rules. Words outside groups are split on white
space, with punctuation and ``'s`` as their own words.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from geco_dataset.generation.engine import (
    GENDERS,
    VERSIONS,
    GenerationError,
    SourceSentence,
)
from geco_dataset.generation.rules import (
    RULES_DIR,
    RuleSet,
    load_rules,
    match_case,
    read_rule_table,
)

NAME_LIST_FILES = {
    "name_female": "Top250Female1996-2019.txt",
    "name_male": "Top250Male1996-2019.txt",
    "surname": "Top250Surnames1991-2000.txt",
}
NAME_MODES = ("pronoun", "names")
SURNAME_MODES = ("keep", "names")


def _read_neutral_names() -> list[str]:
    return [row["name"] for row in read_rule_table(RULES_DIR / "neutral_names.tsv")]


def load_name_lists(names_dir: str | Path) -> dict[str, list[str]]:
    """The released name lists by tag name; ``surname_pl`` is the plural of the surnames (``Smiths``)."""
    root = Path(names_dir)
    lists: dict[str, list[str]] = {}
    for tag, filename in NAME_LIST_FILES.items():
        path = root / filename
        if not path.is_file():
            continue
        names = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if not names:
            raise ValueError(f"{path}: the name list is empty")
        lists[tag] = names
    if "surname" in lists:
        lists["surname_pl"] = [name + "s" for name in lists["surname"]]
    return lists


def pronoun_for_name(words: list[str], position: int, gender: str, rules: RuleSet) -> str:
    """Subject or object pronoun for a first name at ``position`` (rules: ``pronoun_case.json``)."""
    pronoun = rules.gendered_pronoun[(rules.name_role(words, position), gender)]
    return match_case("He" if position == 0 else "he", pronoun)


_NAME_TAG_GENDER = {"name_male": "male", "name_female": "female"}
_SUBJECT_OBJECT = {"he": ("subject", "male"), "him": ("object", "male"), "she": ("subject", "female"),
                   "her": ("object", "female")}


def _sentence_from_labelling(key: str, entry: dict[str, Any], tags: dict[str, str], path: Path,
                             names: dict[str, list[str]] | None, name_mode: str, surname_mode: str,
                             rng: random.Random, rules: RuleSet) -> SourceSentence:
    where = f"{path.name}, sentence {key}"
    try:
        sentence_id = int(entry["idx"])
        words = [str(w) for w in entry["sentence"]]
        versions_in = entry["versions"]
    except (KeyError, TypeError, ValueError) as exc:
        raise GenerationError(f"{where}: missing or malformed field ({exc!r}); expected idx, sentence, versions") from exc
    source = SourceSentence(sentence_id, words, {}, origin=f"{path.name} key {key}")
    name_positions = {int(p) for p, t in (entry.get("tags") or {}).items()
                      if tags.get(str(t.get("tag"))) in ("name", "name_male", "name_female")}
    if name_mode == "pronoun":
        slot_positions = set(name_positions)
        for version in versions_in.values():
            for labelled in (version.get("gender") or {}).values():
                for pos_text, label in (labelled or {}).get("labelling", {}).items():
                    if tags.get(str(label.get("tag"))) in ("name", "name_male", "name_female"):
                        slot_positions.add(int(pos_text))
        source.dropped = rules.name_slot_drops(words, slot_positions)
    # One name per slot and gender, drawn once so that all versions of a sentence agree.
    drawn: dict[tuple[str, int], str] = {}
    for version in VERSIONS:
        if version not in versions_in:
            raise GenerationError(f"{where}: no {version!r} version")
        by_gender: dict[str, dict[int, str]] = {}
        for gender in GENDERS:
            labelling = (versions_in[version].get("gender", {}).get(gender) or {}).get("labelling", {})
            replacements: dict[int, str] = {}
            for pos_text, label in labelling.items():
                try:
                    position = int(pos_text)
                except ValueError:
                    raise GenerationError(f"{where}: word position {pos_text!r} is not an integer") from None
                if not 0 <= position < len(words):
                    raise GenerationError(f"{where}: word position {position} is outside the sentence "
                                          f"({len(words)} words)")
                if "replacement" in label:
                    word = str(label["replacement"])
                    lowered = word.strip().lower()
                    if name_mode == "pronoun" and position in name_positions and lowered in _SUBJECT_OBJECT:
                        # The labelling put a pronoun on a name slot; fix its case where the context is clear:
                        # a subject pronoun after a verb or preposition becomes an object pronoun (never the
                        # reverse: the release keeps labelled object pronouns).
                        labelled_role, pronoun_gender = _SUBJECT_OBJECT[lowered]
                        if labelled_role == "subject" and rules.name_role(words, position) == "object":
                            word = pronoun_for_name(words, position, pronoun_gender, rules)
                    replacements[position] = word
                elif "tag" in label:
                    replacements[position] = _resolve_tag(
                        where, words, position, gender, str(label["tag"]), tags, names, name_mode, surname_mode,
                        rng, drawn, rules)
                else:
                    raise GenerationError(f"{where}: label at position {position} has neither 'replacement' "
                                          f"nor 'tag': {label}")
            by_gender[gender] = replacements
        if name_mode == "names":
            # The non-binary variant of a first-name slot gets a gender-neutral name (rule-tables/neutral_names.tsv).
            for position in sorted(_name_tag_positions(versions_in[version], tags)):
                if by_gender["male"].get(position) != by_gender["female"].get(position) \
                        and position not in by_gender["neutral"]:
                    by_gender["neutral"][position] = _draw(where, "name_neutral", position, names, rng, drawn)
        source.versions[version] = by_gender
    return source


def _name_tag_positions(version: dict[str, Any], tags: dict[str, str]) -> set[int]:
    """Positions that carry a first-name tag in any gender of one version of the labelling."""
    positions = set()
    for labelled in (version.get("gender") or {}).values():
        for pos_text, label in (labelled or {}).get("labelling", {}).items():
            if tags.get(str(label.get("tag"))) in _FIRST_NAME_TAGS:
                positions.add(int(pos_text))
    return positions


_FIRST_NAME_TAGS = ("name", "name_male", "name_female")


def _resolve_tag(where: str, words: list[str], position: int, gender: str, tag_id: str, tags: dict[str, str],
                 names: dict[str, list[str]] | None, name_mode: str, surname_mode: str, rng: random.Random,
                 drawn: dict[tuple[str, int], str], rules: RuleSet) -> str:
    if tag_id not in tags:
        raise GenerationError(f"{where}: tag {tag_id} at position {position} is not in the tags table "
                              f"{sorted(tags)}")
    tag = tags[tag_id]
    if tag in ("surname", "surname_pl"):
        if surname_mode == "keep":
            return words[position]
        return _draw(where, tag, position, names, rng, drawn)
    if tag in _NAME_TAG_GENDER:
        name_gender = _NAME_TAG_GENDER[tag]
        if name_mode == "pronoun":
            return pronoun_for_name(words, position, name_gender, rules)
        return _draw(where, tag, position, names, rng, drawn)
    if tag == "name":
        if name_mode == "pronoun":
            return pronoun_for_name(words, position, "male" if gender == "male" else "female", rules)
        return _draw(where, "name_male" if gender == "male" else "name_female", position, names, rng, drawn)
    raise GenerationError(f"{where}: tag {tag!r} at position {position} has no rule (known: name_male, "
                          f"name_female, name, surname, surname_pl)")


def _draw(where: str, tag: str, position: int, names: dict[str, list[str]] | None, rng: random.Random,
          drawn: dict[tuple[str, int], str]) -> str:
    if not names or tag not in names:
        raise GenerationError(f"{where}: tag {tag!r} at position {position} needs a name list, but none was "
                              f"loaded for it (pass names_dir with {NAME_LIST_FILES.get(tag, tag)})")
    key = (tag, position)
    if key not in drawn:
        drawn[key] = rng.choice(names[tag])
    return drawn[key]


def read_labelling_json(path: str | Path, names_dir: str | Path | None = None, name_mode: str = "pronoun",
                        surname_mode: str = "keep", seed: int = 0, rules: RuleSet | None = None
                        ) -> list[SourceSentence]:
    """Read the released GECO labelling JSON (``all_phrases.json`` or ``merged_labelling_v2.json``).

    Args:
        path: the labelling file.
        names_dir: folder with the released name lists (needed when ``name_mode``/``surname_mode`` is
            ``names``).
        name_mode: ``pronoun`` (first-name slots become he/him or she/her by context, as in the release) or
            ``names`` (a name drawn from the list with ``seed``).
        surname_mode: ``keep`` (the source surname, as in the release) or ``names`` (drawn from the list).
        seed: seed of the name draws.
    """
    if name_mode not in NAME_MODES:
        raise ValueError(f"name_mode must be one of {NAME_MODES}, got {name_mode!r}")
    if surname_mode not in SURNAME_MODES:
        raise ValueError(f"surname_mode must be one of {SURNAME_MODES}, got {surname_mode!r}")
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise GenerationError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or "sentences" not in document:
        raise GenerationError(f"{path}: expected an object with 'tags' and 'sentences'")
    tags = {str(k): str(v["tag"]) for k, v in (document.get("tags") or {}).items()}
    names = load_name_lists(names_dir) if names_dir else {}
    names["name_neutral"] = _read_neutral_names()
    rules = rules or load_rules()
    rng = random.Random(seed)
    sources = [
        _sentence_from_labelling(key, entry, tags, path, names, name_mode, surname_mode, rng, rules)
        for key, entry in document["sentences"].items()
    ]
    return _check_unique(sources, path)


_ABBREVIATIONS = {"mr", "mrs", "ms", "mx", "dr", "st", "ste", "jr", "sr", "prof"}
_PUNCTUATION = set(".,;:!?()[]{}\"“”‘’«»—–")


def _split_plain(text: str) -> list[str]:
    """Words of plain text: punctuation and ``'s`` separate, abbreviations such as ``Mr.`` kept whole."""
    words: list[str] = []
    for chunk in text.split():
        leading: list[str] = []
        trailing: list[str] = []
        while chunk and chunk[0] in _PUNCTUATION:
            leading.append(chunk[0])
            chunk = chunk[1:]
        while chunk and chunk[-1] in _PUNCTUATION:
            if chunk[-1] == "." and chunk[:-1].lower() in _ABBREVIATIONS:
                break
            trailing.insert(0, chunk[-1])
            chunk = chunk[:-1]
        middle = [chunk] if chunk else []
        for suffix in ("'s", "’s"):
            if chunk.lower().endswith(suffix) and len(chunk) > len(suffix):
                middle = [chunk[: -len(suffix)], chunk[-len(suffix):]]
                break
        words.extend(leading + middle + trailing)
    return words


def parse_markup(line: str, sentence_id: int, origin: str = "") -> SourceSentence:
    """One markup sentence (see the module docstring) -> :class:`SourceSentence`."""
    where = f"sentence {sentence_id}" + (f" ({origin})" if origin else "")
    words: list[str] = []
    groups: list[tuple[int, list[str], bool]] = []
    cursor = 0
    while cursor < len(line):
        opening = line.find("[", cursor)
        closing = line.find("]", cursor)
        if closing != -1 and (opening == -1 or closing < opening):
            raise GenerationError(f"{where}: unbalanced markup: ']' at character {closing} has no '['")
        if opening == -1:
            words.extend(_split_plain(line[cursor:]))
            break
        words.extend(_split_plain(line[cursor:opening]))
        end = line.find("]", opening + 1)
        nested = line.find("[", opening + 1)
        if end == -1 or (nested != -1 and nested < end):
            raise GenerationError(f"{where}: unbalanced markup: '[' at character {opening} is not closed")
        body = line[opening + 1:end]
        is_subject = body.startswith("*")
        options = [option.strip() for option in (body[1:] if is_subject else body).split("|")]
        if len(options) not in (2, 3) or any(not option for option in options):
            raise GenerationError(f"{where}: group [{body}] must have 2 or 3 non-empty options "
                                  f"(male|female or male|female|neutral)")
        groups.append((len(words), options, is_subject))
        words.append(options[0])
        cursor = end + 1
    if not groups:
        raise GenerationError(f"{where}: no gendered word: the sentence has no [male|female] group")
    versions: dict[str, dict[str, dict[int, str]]] = {}
    for version in VERSIONS:
        chosen = [g for g in groups if version == "all" or g[2]]
        by_gender: dict[str, dict[int, str]] = {"male": {}, "female": {}, "neutral": {}}
        for position, options, _ in chosen:
            by_gender["male"][position] = options[0]
            by_gender["female"][position] = options[1]
            if len(options) == 3:
                by_gender["neutral"][position] = options[2]
        versions[version] = by_gender
    return SourceSentence(sentence_id, words, versions, origin=origin)


def read_markup(path: str | Path) -> list[SourceSentence]:
    """Read a markup file: one sentence a line, optional ``<id><TAB>`` prefix, ``#`` comment lines."""
    path = Path(path)
    sources = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        sentence_id = number
        if "\t" in raw:
            head, rest = raw.split("\t", 1)
            if head.strip().isdigit():
                sentence_id, line = int(head.strip()), rest.strip()
        sources.append(parse_markup(line, sentence_id, origin=f"{path.name} line {number}"))
    return _check_unique(sources, path)


def parse_jsonl_record(record: dict[str, Any], sentence_id: int, origin: str = "") -> SourceSentence:
    """One JSONL record -> :class:`SourceSentence`.

    Either ``{"markup": "..."}`` or ``{"male": [words], "female": [words], "neutral": [words]?,
    "subject": [positions]?}``; ``sentence_id`` (optional) overrides the line number. Positions where
    male and female differ are the altered words (D_A); ``subject`` lists those D_S alters.
    """
    where = f"sentence {sentence_id}" + (f" ({origin})" if origin else "")
    if not isinstance(record, dict):
        raise GenerationError(f"{where}: expected a JSON object")
    if "markup" in record:
        return parse_markup(str(record["markup"]), sentence_id, origin)
    variants: dict[str, list[str]] = {}
    for gender in GENDERS:
        if gender in record:
            value = record[gender]
            if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
                raise GenerationError(f"{where}: field {gender!r} must be a list of words")
            variants[gender] = value
    if "male" not in variants or "female" not in variants:
        raise GenerationError(f"{where}: needs 'markup' or both 'male' and 'female' word lists")
    lengths = {gender: len(words) for gender, words in variants.items()}
    if len(set(lengths.values())) != 1:
        raise GenerationError(f"{where}: variants of different lengths {lengths}")
    male, female = variants["male"], variants["female"]
    altered = [i for i, (m, f) in enumerate(zip(male, female)) if m != f]
    if not altered:
        raise GenerationError(f"{where}: no gendered word: the male and female variants are identical")
    subject = record.get("subject", [])
    if not isinstance(subject, list) or any(not isinstance(p, int) or not 0 <= p < len(male) for p in subject):
        raise GenerationError(f"{where}: 'subject' must be a list of word positions within the sentence")
    versions: dict[str, dict[str, dict[int, str]]] = {}
    for version, positions in (("all", altered), ("subj", [p for p in altered if p in subject])):
        by_gender = {"male": {p: male[p] for p in positions}, "female": {p: female[p] for p in positions},
                     "neutral": {}}
        if "neutral" in variants:
            neutral = variants["neutral"]
            by_gender["neutral"] = {p: neutral[p] for p in range(len(male))
                                    if (p in positions or version == "all") and neutral[p] != male[p]}
        versions[version] = by_gender
    return SourceSentence(sentence_id, list(male), versions, origin=origin)


def read_jsonl(path: str | Path) -> list[SourceSentence]:
    """Read a JSONL file of :func:`parse_jsonl_record` records (one per line)."""
    path = Path(path)
    sources = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise GenerationError(f"sentence {number} ({path.name} line {number}): not valid JSON ({exc})") from None
        sentence_id = record.get("sentence_id", number) if isinstance(record, dict) else number
        sources.append(parse_jsonl_record(record, int(sentence_id), origin=f"{path.name} line {number}"))
    return _check_unique(sources, path)


def _check_unique(sources: list[SourceSentence], path: Path) -> list[SourceSentence]:
    seen: set[int] = set()
    for source in sources:
        if source.sentence_id in seen:
            raise GenerationError(f"{path}: sentence id {source.sentence_id} occurs twice ({source.origin})")
        seen.add(source.sentence_id)
    return sources


def read_sources(path: str | Path, names_dir: str | Path | None = None, **options: Any) -> list[SourceSentence]:
    """Read any supported input by its extension: ``.json`` (labelling), ``.jsonl``, else markup text."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"labels file not found: {path}")
    if path.suffix == ".json":
        return read_labelling_json(path, names_dir=names_dir, **options)
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    return read_markup(path)
