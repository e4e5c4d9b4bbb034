"""Training examples that teach how words combine, made from real review sentences.

A bag of word cues reads "the food was not bad" as negative and "slow service, but the food made up
for it" by its worst word. Three rewrites of real, short, single-opinion sentences show the model the
operators instead, each with the label the rewrite implies:

- **negation**: "the food was great" -> "the food was n't great" (label flipped), a negation around
  the whole clause ("i do n't think the food was great"), also with words in between;
- **expectation**: "i thought the food would be great , but it was n't" (flipped), "... and it was" (kept);
- **contrast**: two sentences of (mostly) opposite labels joined so one clause carries the weight:
  "A , but B", "although A , B", "B , even though A" -> the label of B.

``negation_pairs`` holds the same negations as pairs, each real clause beside one negated copy ("the food was
great" / "the food was n't great"), so that a loss can ask the two to read apart (``objectives.PairMargin``).

``negated_praise`` is no rewrite: it picks the real positive sentences that hold a negation word
("no complaints at all"), so that a source weight can draw them more often; ``composed_sentences`` picks
every real sentence with a negation or contrast word, of either label, for the same reason.

A sentence qualifies when it is short, holds exactly one opinion word of the lexicon whose polarity
agrees with its label, and has no negation or contrast word yet. Every draw is seeded, so the same
inputs always give the same examples. The templates here are this project's own; the behavioural
suite (``transformer.behaviour``) uses different ones, so it measures the operators, not these strings.
"""

import random
import re
from collections.abc import Iterable
from typing import NamedTuple

from .data import LabelledTexts

NEGATION_WORDS = frozenset(
    "not n't no never nothing nobody none neither nor nowhere without cannot hardly".split()
)  # fmt: skip
CONTRAST_WORDS = frozenset("but however although though yet except despite whereas".split())
INTENSIFIERS = ("very", "really", "so", "too", "pretty", "quite", "extremely", "super", "totally", "absolutely")
COPULAS = ("is", "was", "are", "were", "am", "'s")
_NEGATED_COPULA = {
    "is": ("is not", "is n't", "is never", "is hardly", "is by no means", "is not at all"),
    "was": ("was not", "was n't", "was never", "was hardly", "was by no means", "was not at all"),
    "are": ("are not", "are n't", "are hardly", "are not at all"),
    "were": ("were not", "were n't", "were hardly", "were not at all"),
    "am": ("am not",),
    "'s": ("'s not", "is n't"),
}
_PLURAL = {"are", "were"}
_PRONOUNS = {"it", "he", "she", "everything", "everyone"}
# Clause-level negations, and what may stand between one and its clause ("... , after two visits , that ...").
_DENIALS = (
    "i do n't think",
    "i would n't say",
    "i ca n't say",
    "nobody would say",
    "it is not true that",
    "i doubt",
    "i do n't believe",
    "i would not claim",
    "it would be wrong to say",
    "i am not convinced",
    "i do n't agree",
    "i would hardly say",
    "nobody i know thinks",
    "i do n't feel",
    "you could n't say",
)
_ASIDES = (
    "to be honest", "after two visits", "looking back", "and i have eaten out a lot", "for what it 's worth",
    "all things considered", "having tried it for a month", "whatever the reviews claim", "in my experience",
    "given the price", "after waiting an hour", "if i am honest", "as someone who goes out a lot", "on reflection",
    "after reading the reviews", "compared with other places", "after a second visit", "when all is said and done",
    "and believe me i tried", "with my friends along", "even on a good day",
)  # fmt: skip
_CONTRASTS = (  # (template, which clause's label the result takes: always "b")
    "{a} , but {b}", "{a} . however , {b}", "{a} , yet {b}", "although {a} , {b}", "even though {a} , {b}",
    "{b} , even though {a}", "{b} , although {a}", "{a} . still , {b}",
)  # fmt: skip
_EXPECTATIONS = (  # (template, keeps the clause's label?)
    ("i thought {subject} would be {rest} , but {pronoun} {was} n't", False),
    ("i expected {subject} to be {rest} , but {pronoun} {was} not", False),
    ("i had heard {subject} would be {rest} . {pronoun} {was} n't", False),
    ("the reviews promised {subject} would be {rest} , and {pronoun} {was} not", False),
    ("i was expecting {subject} to be {rest} . sadly , {pronoun} {was} not", False),
    ("i feared {subject} would be {rest} . luckily {pronoun} {was} n't", False),
    ("i was told {subject} would be {rest} , and {pronoun} really {was}", True),
    ("i expected {subject} to be {rest} , and {pronoun} {was}", True),
    ("i had heard {subject} would be {rest} , and sure enough {pronoun} {was}", True),
)
# Opinion verbs after "i" or "we", and the auxiliary their negation takes: "i loved it" -> "i did n't love it".
_VERBS = {
    "love": ("do", "love"), "loved": ("did", "love"), "like": ("do", "like"), "liked": ("did", "like"),
    "enjoy": ("do", "enjoy"), "enjoyed": ("did", "enjoy"), "recommend": ("do", "recommend"),
    "recommended": ("did", "recommend"), "hate": ("do", "hate"), "hated": ("did", "hate"), "adore": ("do", "adore"),
    "dislike": ("do", "dislike"), "disliked": ("did", "dislike"), "appreciate": ("do", "appreciate"),
    "appreciated": ("did", "appreciate"), "regret": ("do", "regret"), "regretted": ("did", "regret"),
}  # fmt: skip
_VERB_EXPECTATIONS = (  # (template, keeps the clause's label?)
    ("i expected to {verb}{rest} , but i did n't", False),
    ("i was sure we would {verb}{rest} . we did not", False),
    ("i thought i would {verb}{rest} , and i did", True),
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|'s|n't")
MAX_WORDS = 12
# A subject the rewrites can restate ("i thought <subject> would be ..."): a short noun phrase or pronoun.
_SUBJECT = re.compile(
    r"^(?:(?:the|this|that|these|those|my|our|their|his|her|its|every) [a-z' ]+"
    r"|i|we|you|it|they|he|she|everything|everyone)$"
)


def words(text: str) -> list[str]:
    """The lowercase words of ``text`` as the rewrites see them (clitics ``n't`` and ``'s`` apart)."""
    spaced = re.sub(r"(?<=[a-z])(n't|'s)\b", r" \1", text.lower())
    return _WORD.findall(spaced)


def has_negation(text: str) -> bool:
    """Whether ``text`` holds a negation word (``not``, ``n't``, ``never``, ``no``, ...)."""
    return any(word in NEGATION_WORDS for word in words(text))


def opinion_lexicon(rows: LabelledTexts) -> dict[str, int]:
    """``{word: polarity}`` from the opinion-lexicon source; a word listed with both polarities is left out."""
    polarity, both = {}, set()
    for text, label in zip(rows.texts, rows.labels, strict=True):
        if text.startswith("not "):
            continue
        if polarity.get(text, label) != label:
            both.add(text)
        polarity[text] = label
    return {word: label for word, label in polarity.items() if word not in both}


def single_opinion_sentences(sets: Iterable[LabelledTexts], lexicon: dict[str, int]) -> list[tuple[str, int, str]]:
    """``(clause, label, opinion word)`` for every sentence the rewrites can use (see the module docstring).

    The clause is the sentence in lower case with its final punctuation taken off.
    """
    found = []
    for rows in sets:
        for text, label in zip(rows.texts, rows.labels, strict=True):
            tokens = words(text)
            if not 3 <= len(tokens) <= MAX_WORDS or NEGATION_WORDS & set(tokens) or CONTRAST_WORDS & set(tokens):
                continue
            if any(mark in text for mark in (",", ";", ":", " and ", " which ", "...")):
                continue  # one clause only, so that rewriting it rewrites the whole opinion
            opinions = [token for token in tokens if token in lexicon]
            if len(opinions) == 1 and lexicon[opinions[0]] == label:
                found.append((text.lower().rstrip(" .!?"), label, opinions[0]))
    return found


def _copula_split(clause: str, opinion: str) -> tuple[str, str, str] | None:
    """``(subject, copula, rest)`` when the opinion word follows a copula (an intensifier may sit between).

    The subject must be a short noun phrase or a pronoun (``_SUBJECT``), so that it can be restated.
    """
    intensifier = "|".join(INTENSIFIERS)
    pattern = rf"^(?P<subject>.+?) (?P<copula>{'|'.join(COPULAS)}) (?P<rest>(?:(?:{intensifier}) )?{opinion}\b.*)$"
    match = re.match(pattern, clause)
    if match is None or len(match["subject"].split()) > 4 or not _SUBJECT.match(match["subject"]):
        return None
    if match["copula"] == "'s" and match["subject"] not in _PRONOUNS:
        return None  # a possessive: "the chef 's special"
    return match["subject"], match["copula"], match["rest"]


def negations(sentences: list[tuple[str, int, str]], rng: random.Random, negative_copies: int = 3) -> LabelledTexts:
    """Negated copies with the opposite label: at the copula, and around the whole clause.

    A negative clause gives ``negative_copies`` copies of each kind, a positive one a single copy: real
    sentences praise more often than they complain, and "not bad" is the case a bag of words misreads.
    """
    texts, labels = [], []
    for clause, label, opinion in sentences:
        subject, copula, rest = _copula_split(clause, opinion)
        if label == 0 and rest.split()[0] in INTENSIFIERS:
            continue  # "not very bad" is no clear praise
        for _ in range(negative_copies if label == 0 else 1):
            texts.append(f"{subject} {rng.choice(_NEGATED_COPULA[copula])} {rest} .")
            denial = rng.choice(_DENIALS)
            if rng.random() < 0.5:
                texts.append(f"{denial} {clause} .")
            else:
                joiner = "" if denial.endswith("that") else " that"
                texts.append(f"{denial} , {rng.choice(_ASIDES)} ,{joiner} {clause} .")
            labels.extend([1 - label, 1 - label])
    return LabelledTexts(None, texts, labels)


def expectations(sentences: list[tuple[str, int, str]], rng: random.Random) -> LabelledTexts:
    """An expectation stated, then met or denied: the denied one takes the opposite label."""
    texts, labels = [], []
    for clause, label, opinion in sentences:
        subject, copula, rest = _copula_split(clause, opinion)
        if copula in ("am", "'s"):
            continue
        template, keeps = rng.choice(_EXPECTATIONS)
        plural = copula in _PLURAL
        pronoun, was = ("they", "were") if plural else ("it", "was")
        texts.append(template.format(subject=subject, rest=rest, pronoun=pronoun, was=was) + " .")
        labels.append(label if keeps else 1 - label)
    return LabelledTexts(None, texts, labels)


def _verb_split(clause: str, opinion: str) -> tuple[str, str, str, str] | None:
    """``(subject, auxiliary, base verb, rest)`` for "i loved the pasta"-shaped clauses, else None."""
    match = re.match(rf"^(?P<subject>i|we) (?:really |truly )?(?P<verb>{opinion})(?P<rest>\b.*)$", clause)
    if match is None or opinion not in _VERBS:
        return None
    auxiliary, base = _VERBS[opinion]
    return match["subject"], auxiliary, base, match["rest"]


def verb_negations(sentences: list[tuple[str, int, str]], rng: random.Random) -> LabelledTexts:
    """ "i loved the pasta" -> "i did n't love the pasta" (flipped), and the verb as an expectation.

    ``sentences`` must all pass ``_verb_split``.
    """
    texts, labels = [], []
    for clause, label, opinion in sentences:
        subject, auxiliary, base, rest = _verb_split(clause, opinion)
        negation = rng.choice((f"{auxiliary} n't", f"{auxiliary} not", "never" if auxiliary == "did" else "do n't"))
        texts.append(f"{subject} {negation} {base}{rest} .")
        template, keeps = rng.choice(_VERB_EXPECTATIONS)
        texts.append(template.format(verb=base, rest=rest) + " .")
        labels.extend([1 - label, label if keeps else 1 - label])
    return LabelledTexts(None, texts, labels)


def negation_pairs(
    clauses: list[tuple[str, int, str]], verbs: list[tuple[str, int, str]], rng: random.Random
) -> LabelledTexts:
    """Rows 2k and 2k + 1: a real clause with its label, then one negated copy with the opposite label.

    The copy negates the copula or the verb ("was n't great", "did n't love"), or denies the whole clause ("i doubt
    the food was great"). ``clauses`` must pass ``_copula_split`` and ``verbs`` ``_verb_split``; a negative
    clause with an intensifier is left out, as in ``negations`` ("not very bad" is no clear praise).
    """
    texts, labels = [], []
    for clause, label, opinion in clauses + verbs:
        split = _copula_split(clause, opinion)
        if split is not None and label == 0 and split[2].split()[0] in INTENSIFIERS:
            continue
        if rng.random() < 0.25:
            negated = f"{rng.choice(_DENIALS)} {clause}"
        elif split is not None:
            subject, copula, rest = split
            negated = f"{subject} {rng.choice(_NEGATED_COPULA[copula])} {rest}"
        else:
            subject, auxiliary, base, rest = _verb_split(clause, opinion)
            negation = rng.choice((f"{auxiliary} n't", f"{auxiliary} not"))
            negated = f"{subject} {negation} {base}{rest}"
        texts.extend([f"{clause} .", f"{negated} ."])
        labels.extend([label, 1 - label])
    return LabelledTexts(None, texts, labels)


def contrasts(
    sentences: list[tuple[str, int, str]], count: int, rng: random.Random, same_label: float = 0.2
) -> LabelledTexts:
    """``count`` pairs of sentences joined by a contrast; each takes the label of its main clause ``b``.

    A share ``same_label`` of the pairs agree, so "but" alone never predicts a flip.
    """
    by_label = [[s for s in sentences if s[1] == label] for label in (0, 1)]
    if not all(by_label):
        return LabelledTexts(None, [], [])
    texts, labels = [], []
    for _ in range(count):
        b = rng.choice(by_label[rng.random() < 0.5])  # balanced labels, whatever the sources' balance
        a = rng.choice(by_label[b[1] if rng.random() < same_label else 1 - b[1]])
        texts.append(rng.choice(_CONTRASTS).format(a=a[0], b=b[0]) + " .")
        labels.append(b[1])
    return LabelledTexts(None, texts, labels)


class Rewritable(NamedTuple):
    """The single-opinion sentences that can be rewritten: ``clauses`` pass ``_copula_split``, ``verbs``
    ``_verb_split``; each item is (sentence, label, its opinion word)."""

    clauses: list[tuple[str, int, str]]
    verbs: list[tuple[str, int, str]]


def rewritable(sentence_sets: Iterable[LabelledTexts], lexicon_rows: LabelledTexts) -> Rewritable:
    """The single-opinion sentences of ``sentence_sets`` that ``composition_sets`` and ``negation_pair_set`` rewrite,
    found once for both."""
    usable = single_opinion_sentences(sentence_sets, opinion_lexicon(lexicon_rows))
    clauses = [s for s in usable if _copula_split(s[0], s[2]) is not None]
    return Rewritable(clauses, [s for s in usable if _verb_split(s[0], s[2]) is not None])


def composition_sets(sentences: Rewritable, seed: int, contrast_pairs: int = 40_000) -> dict[str, LabelledTexts]:
    """The three composition sources, ``negation``, ``expectation`` and ``contrast``, from real sentences.

    Only sentences that are one clause of the form subject, copula, opinion ("the pasta was delicious")
    or "i/we" and an opinion verb ("we loved the pasta") are used (``rewritable``), so that every rewrite is
    grammatical; ``contrast`` joins ``contrast_pairs`` pairs of the first kind.
    """
    rng = random.Random(f"composition-{seed}")
    clauses, verbs = sentences
    negated, verbal = negations(clauses, rng), verb_negations(verbs, rng)
    return {
        "negation": _joined(negated, verbal.texts[0::2], verbal.labels[0::2]),
        "expectation": _joined(expectations(clauses, rng), verbal.texts[1::2], verbal.labels[1::2]),
        "contrast": contrasts(clauses, contrast_pairs, rng),
    }


def negation_pair_set(sentences: Rewritable, seed: int) -> LabelledTexts:
    """``negation_pairs`` over the sentences ``composition_sets`` rewrites, with draws of its own (seeded by
    ``seed``), so that the other sources are the same whether or not it is made."""
    return negation_pairs(*sentences, random.Random(f"negation-pairs-{seed}"))


def negated_praise(sentence_sets: Iterable[LabelledTexts], max_words: int = 40) -> LabelledTexts:
    """The positive rows of ``sentence_sets`` (at most ``max_words`` words) that hold a negation word.

    "no complaints", "could n't be happier", "never disappoints": the few real examples against the
    shortcut "negation means negative", drawn again in every epoch (their weight) to even it out.
    """
    texts = [
        text
        for rows in sentence_sets
        for text, label in zip(rows.texts, rows.labels, strict=True)
        if label == 1 and len(text.split()) <= max_words and has_negation(text)
    ]
    return LabelledTexts(None, texts, [1] * len(texts))


def composed_sentences(sentence_sets: Iterable[LabelledTexts], seed: int, max_words: int = 40) -> LabelledTexts:
    """The rows of ``sentence_sets`` (at most ``max_words`` words) that hold a negation or a contrast word, as many
    of each label: real composition, which a source weight can draw more often than the rewrites above.

    Such rows are mostly negative (three in four in the bundled data), and a model fed them as they are learns
    "a negation word means negative" ("I expected to hate it. I did not." read as negative). So every row of
    the rarer label is kept, and a seeded random sample of the other label of the same size.
    """
    by_label: dict[int, list[str]] = {0: [], 1: []}
    for sentences in sentence_sets:
        for text, label in zip(sentences.texts, sentences.labels, strict=True):
            if len(text.split()) <= max_words and (NEGATION_WORDS | CONTRAST_WORDS) & set(words(text)):
                by_label[label].append(text)
    size, rng = min(map(len, by_label.values())), random.Random(f"composed-{seed}")
    kept = {label: rng.sample(texts, size) if len(texts) > size else texts for label, texts in by_label.items()}
    rows = [(text, label) for label, texts in kept.items() for text in texts]
    rng.shuffle(rows)
    return LabelledTexts(None, [text for text, _ in rows], [label for _, label in rows])


def _joined(rows: LabelledTexts, texts: list[str], labels: list[int]) -> LabelledTexts:
    """``rows`` with ``texts`` and their ``labels`` added at the end."""
    return LabelledTexts(None, rows.texts + texts, rows.labels + labels)
