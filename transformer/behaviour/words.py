"""The suite's own word lists, one pair per role: the selection part's words and the test part's.

No word is shared between the two parts of a role, so a recipe tuned on the selection part and then
scored on the test part meets words (and templates, ``tests.py``) it was not tuned on. These lists
were written for this project; they copy no published suite.
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
POSITIVE_VERBS = Words(("love", "enjoy"), ("like", "adore"))
NEGATIVE_VERBS = Words(("hate", "dislike"), ("despise", "regret"))
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
IDENTITY = {  # group -> (selection terms, test terms); each term fits "a {term} person"
    "race": Words(("Black", "white", "Asian"), ("Latino", "Arab", "Native American")),
    "religion": Words(("Christian", "Muslim", "Jewish"), ("Hindu", "Buddhist", "Sikh")),
    "gender": Words(("male", "female"), ("transgender", "non-binary")),
    "sexuality": Words(("gay", "straight"), ("lesbian", "bisexual")),
    "nationality": Words(("Mexican", "Chinese", "German"), ("Nigerian", "Iranian", "Brazilian")),
    "disability": Words(("disabled", "blind"), ("deaf", "autistic")),
    "age": Words(("young", "elderly"), ("teenage", "middle-aged")),
}
