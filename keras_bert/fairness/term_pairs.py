"""TermPairs: the term pairs a counterfactual bias check swaps (he/she, names, a user's own list).

    pairs = TermPairs.builtin()                  # pronouns, gendered nouns, first names by gender
    pairs = TermPairs.read("my_pairs.tsv")       # term<TAB>term, one pair per line
    pairs = TermPairs.resolve(["builtin", "my_pairs.tsv"])   # both lists in one

The file format, one pair per line, UTF-8:

    # comments and blank lines are skipped
    nurse<TAB>doctor
    Alice<TAB>Bob

A term is one or more words (letters, digits, apostrophes, hyphens; single spaces between words). Terms match
whole words and ignore case, and every term may appear in one pair only: "he<TAB>he", or "he" in two pairs,
would leave a swap with two answers, so either is refused with the line that says it.

This module is pure Python and imports nothing heavy: the command line reads pairs files before TensorFlow loads.
"""

import dataclasses
import os
import re

BUILTIN = "builtin"

# The built-in lists, each pair (male, female). The pronouns "her" and "his" take two forms on the other side
# (her -> him or his, his -> her or hers): `PRONOUN_PAIRS` are swapped by `CounterfactualSwapper`'s rule for them.
PRONOUN_PAIRS = (("he", "she"), ("him", "her"), ("his", "her(s)"), ("himself", "herself"))
NOUN_PAIRS = (
    ("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("father", "mother"),
    ("fathers", "mothers"), ("son", "daughter"), ("sons", "daughters"), ("brother", "sister"),
    ("brothers", "sisters"), ("husband", "wife"), ("husbands", "wives"), ("king", "queen"), ("mr", "mrs"),
    ("actor", "actress"), ("actors", "actresses"), ("gentleman", "lady"), ("gentlemen", "ladies"),
    ("boyfriend", "girlfriend"), ("uncle", "aunt"), ("nephew", "niece"), ("grandfather", "grandmother"),
)
# Common English first names, paired by frequency rank; names that are also ordinary words (Mark, Bill, Will,
# Rose, Grace, Hope, ...) are left out, so that swapping them cannot change a sentence's meaning.
NAME_PAIRS = (
    ("john", "mary"), ("james", "patricia"), ("robert", "jennifer"), ("michael", "linda"),
    ("david", "elizabeth"), ("richard", "susan"), ("thomas", "jessica"), ("charles", "sarah"),
    ("daniel", "karen"), ("matthew", "nancy"), ("anthony", "lisa"), ("steven", "margaret"),
    ("paul", "emily"), ("andrew", "michelle"), ("kevin", "laura"), ("brian", "rachel"),
)
_WORD = r"[^\W_](?:[\w'’-]*[^\W_])?"
_TERM = re.compile(rf"{_WORD}(?: {_WORD})*")


@dataclasses.dataclass(frozen=True)
class TermPairs:
    """Pairs of terms to swap for each other, and where they came from.

    Args:
        pairs: `((term, term), ...)`; each term is swapped for the other, in both directions.
        source: where the pairs came from, in words ("builtin", a file name, or both).
        builtin_pronouns: whether the built-in pronoun pairs (`PRONOUN_PAIRS`) are swapped too; they are not in
            `pairs` because "her" and "his" each have two counterparts.

    Raises:
        ValueError: a term that is not one or more words, a pair with the same term twice, or a term in two
            pairs (the message names both).
    """

    pairs: tuple
    source: str = "given"
    builtin_pronouns: bool = False

    def __post_init__(self):
        pairs = tuple((str(a), str(b)) for a, b in self.pairs)
        object.__setattr__(self, "pairs", pairs)
        _check_pairs([(f"pair {i + 1}", a, b) for i, (a, b) in enumerate(pairs)], self._reserved())

    def _reserved(self):
        """{term: the pair that has it} of the built-in pronouns, when they are swapped."""
        terms = {}
        for a, b in PRONOUN_PAIRS if self.builtin_pronouns else ():
            for term in (a, b.replace("(s)", ""), *(("hers",) if b.endswith("(s)") else ())):
                terms.setdefault(term, f"builtin {a}/{b}")  # "her": the first pair that has it
        return terms

    @classmethod
    def builtin(cls):
        """The built-in lists: pronouns (he/she, him/her, his/her(s), himself/herself), gendered nouns
        (man/woman, father/mother, ...) and 16 pairs of common first names by gender."""
        return cls(NOUN_PAIRS + NAME_PAIRS, source=BUILTIN, builtin_pronouns=True)

    @classmethod
    def read(cls, path, reserved=None):
        """The pairs of a `term<TAB>term` file (see the module's docstring for the format).

        Args:
            path: the file.
            reserved: `{term: where}` of terms another list already has (a term may be in one pair only).

        Raises:
            FileNotFoundError: no such file.
            ValueError: the file cannot be read as UTF-8 text, holds no pair, or has a line that is not
                `term<TAB>term` of two different terms not already listed (the message names the line).
        """
        path = os.fspath(path)
        if os.path.isdir(path):
            raise ValueError(f"{path}: a folder; expected a pairs file (term<TAB>term per line)")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such pairs file")
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        except OSError as error:
            raise ValueError(f"{path}: cannot read the pairs file: {error.strerror or error}") from None
        located = []
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 2:
                raise ValueError(f"{path}:{number}: expected term<TAB>term, got {len(fields)} tab-separated "
                                 f"field(s): {line.strip()[:60]!r}")
            located.append((f"{path}:{number}", fields[0].strip(), fields[1].strip()))
        if not located:
            raise ValueError(f"{path}: no pairs (expected term<TAB>term lines)")
        _check_pairs(located, reserved or {})
        return cls(tuple((a, b) for _, a, b in located), source=path)

    @classmethod
    def resolve(cls, spec):
        """`TermPairs` from what a user gives: "builtin", a pairs file, a list of those, or `TermPairs`.

        Raises:
            FileNotFoundError, ValueError: as `read`; a term in two of the lists.
        """
        if isinstance(spec, TermPairs):
            return spec
        if spec is None:
            raise ValueError("no term pairs: give 'builtin' or a pairs file (term<TAB>term per line)")
        specs = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
        if not specs:
            raise ValueError("no term pairs: give 'builtin' or a pairs file (term<TAB>term per line)")
        if all(isinstance(s, (tuple, list)) and len(s) == 2 for s in specs):
            return cls(tuple(tuple(s) for s in specs))
        merged = None
        for item in specs:
            if isinstance(item, TermPairs):
                pairs = item
            elif os.fspath(item) == BUILTIN:
                pairs = cls.builtin()
            else:
                pairs = cls.read(item, reserved=merged.locations() if merged else None)
            merged = pairs if merged is None else merged.joined(pairs)
        return merged

    def joined(self, other):
        """One list of this one's pairs and `other`'s (a term in both is a ValueError)."""
        return TermPairs(self.pairs + other.pairs, source=f"{self.source} + {other.source}",
                         builtin_pronouns=self.builtin_pronouns or other.builtin_pronouns)

    def locations(self):
        """`{term (lowercase): the pair that has it}`, the built-in pronouns included."""
        terms = self._reserved()
        terms.update({term.lower(): f"{self.source} {a}/{b}" for a, b in self.pairs for term in (a, b)})
        return terms

    def names(self):
        """Every pair's name ("he/she", ...), the built-in pronouns first."""
        return [f"{a}/{b}" for a, b in (PRONOUN_PAIRS if self.builtin_pronouns else ()) + self.pairs]

    def __len__(self):
        return len(self.pairs) + (len(PRONOUN_PAIRS) if self.builtin_pronouns else 0)


def _check_pairs(located, reserved):
    """Raises a ValueError naming the place of a malformed term, a pair of one term, or a term listed twice.

    Args:
        located: `[(where, term, term)]`.
        reserved: `{term (lowercase): where}` of terms listed before these.
    """
    seen = dict(reserved)
    for where, a, b in located:
        for term in (a, b):
            if not _TERM.fullmatch(term):
                raise ValueError(f"{where}: {term!r} is not a term (one or more words of letters, digits, "
                                 "apostrophes or hyphens, single spaces between them)")
        if a.lower() == b.lower():
            raise ValueError(f"{where}: the pair has the same term twice ({a!r}, {b!r}): nothing to swap")
        for term in (a, b):
            if term.lower() in seen:
                raise ValueError(f"{where}: {term!r} is already in a pair ({seen[term.lower()]}); a term may be "
                                 "in one pair only, or its swap would have two answers")
            seen[term.lower()] = f"{where} {a}/{b}"
