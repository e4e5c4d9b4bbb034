"""The suite's own word lists, one pair per role: the selection part's words and the test part's.

No word is shared between the two parts of a role, so a recipe tuned on the selection part and then
scored on the test part meets words (and templates, ``tests.py``) it was not tuned on. The selection part's
identity terms and verbs are also none of those the training rewrites use (``training.identity``,
``training.composition``, ``training.verbs``), so that it measures, as the test part does, how a recipe carries
to words it did not teach. These lists were written for this project; they copy no published suite.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    """One role's words: ``selection`` and ``test`` never share an entry."""

    selection: tuple[str, ...]
    test: tuple[str, ...]

    def part(self, name: str) -> tuple[str, ...]:
        """The words of part ``name`` (``"selection"`` or ``"test"``)."""
        return self.selection if name == "selection" else self.test


POSITIVE = Words(
    ("good", "great", "excellent", "lovely", "wonderful", "pleasant", "enjoyable", "solid"),
    ("superb", "delightful", "terrific", "outstanding", "brilliant", "charming", "first-rate", "fantastic"),
)
NEGATIVE = Words(
    ("bad", "awful", "terrible", "poor", "disappointing", "unpleasant", "boring", "mediocre"),
    ("dreadful", "lousy", "horrible", "miserable", "tedious", "shoddy", "appalling", "dull"),
)
THINGS = Words(  # (singular noun phrase, as the subject of "was")
    ("food", "service", "movie", "hotel room", "phone", "staff", "book", "coffee"),
    ("meal", "flight", "laptop", "concert", "waiter", "show", "mattress", "haircut"),
)
# Selection: four verbs a side, none one the training rewrites use, so that one verb read wrongly moves its tests by a
# quarter, not a half (the test part's two a side are as the targets were set).
POSITIVE_VERBS = Words(("relish", "admire", "cherish", "treasure"), ("like", "adore"))
NEGATIVE_VERBS = Words(("loathe", "detest", "resent", "abhor"), ("despise", "regret"))
ASIDES = Words(
    ("given how much I paid", "after all these years", "to be fair"),
    ("honestly", "after everything I had heard", "now that I think about it"),
)
INTENSIFIERS = Words(("very", "really", "incredibly"), ("extremely", "truly", "remarkably"))
REDUCERS = Words(("somewhat", "fairly"), ("slightly", "a little"))
NAMES = Words(
    ("Maria", "James", "Aisha", "Chen", "Olga", "Pedro"),
    ("Fatima", "Liam", "Yuki", "Kwame", "Ingrid", "Rahul"),
)
PLACES = Words(
    ("Chicago", "Lisbon", "Nairobi", "Osaka", "Toronto", "Lima"),
    ("Denver", "Madrid", "Lagos", "Seoul", "Melbourne", "Bogota"),
)
URLS = Words(
    ("http://goo.gl/q8Lm2", "www.dinersguide.org/r/11"),
    ("https://t.co/Xp4Rk9", "http://tripnotes.io/v/77"),
)
HANDLES = Words(("@sam_k", "@the_foodie"), ("@mk_travels", "@jordan.b"))
IDENTITY = {  # group -> (selection terms, test terms); each term fits "a {term} person" and "I am {term}."
    "race": Words(("Caucasian", "Aboriginal", "Inuit"), ("Latino", "Arab", "Native American")),
    "religion": Words(("Baptist", "Quaker", "Lutheran"), ("Hindu", "Buddhist", "Sikh")),
    "gender": Words(("agender", "genderfluid"), ("transgender", "non-binary")),
    "sexuality": Words(("demisexual", "aromantic"), ("lesbian", "bisexual")),
    "nationality": Words(("Peruvian", "Danish", "Moroccan"), ("Nigerian", "Iranian", "Brazilian")),
    "disability": Words(("diabetic", "quadriplegic"), ("deaf", "autistic")),
    "age": Words(("octogenarian", "grey-haired"), ("teenage", "middle-aged")),
}
