"""CounterfactualSwapper: a text with every listed term swapped for its counterpart, whole words only, case kept.

    swapper = CounterfactualSwapper(TermPairs.builtin())
    swapper.swap("He gave her his word.")
    # Swap(text='She gave him her word.', pairs=('he/she', 'him/her', 'his/her(s)'))
    swapper.swap("a fine film")   # None: no term to swap

Both directions at once: "he" becomes "she" and "she" becomes "he" in one pass, so a sentence with both keeps
both (swapped). A term matches as a whole word, ignoring case ("the" holds no "he"; "He's" holds "He",
"ex-husband" holds "husband"), and the replacement takes the original's case: "He" -> "She", "HE" -> "SHE",
"john" -> "mary", "John" -> "Mary".

The built-in pronouns need a rule, since English has one feminine form where it has two masculine ones:
"her" is "him" as an object ("I saw her.", "gave her the book") and "his" as a possessive ("her film"), and
"his" is "her" before a noun ("his film") and "hers" alone ("the idea was his."). The rule looks at the next
word: a word that is not a function word (`FUNCTION_WORDS`: articles, prepositions, conjunctions, pronouns,
auxiliaries) makes the possessive form. It is a heuristic; a bias check reports every swapped sentence it
counts, so a wrong form can be seen.

Pure Python (the `re` module): the same on every backend.
"""

import collections
import re

from keras_bert.fairness.term_pairs import PRONOUN_PAIRS, TermPairs

# Words after "her" / "his" that show no noun follows: "gave her the book" (him), "the idea was his and" (hers).
FUNCTION_WORDS = frozenset(
    """a an the this that these those some any every each to in on at for with about from by into onto over under
    after before through of off out up down back away around across against along among between during without
    within and or but nor so than as if when while because though although until since where whether i you he she
    it we they me him her us them my your our their its his hers mine yours himself herself is was are were be been
    being am do does did has have had
    will would can could should shall may might must not too again anymore now then there here all both either
    neither""".split()
)
_PRONOUN_NAMES = {pair: f"{pair[0]}/{pair[1]}" for pair in PRONOUN_PAIRS}
_HIM_HER, _HIS_HER = _PRONOUN_NAMES[("him", "her")], _PRONOUN_NAMES[("his", "her(s)")]
_NEXT_WORD = re.compile(r"\s+([^\W\d_][\w'’-]*)")


class Swap(collections.namedtuple("Swap", "text pairs")):
    """A swapped text: `text`, and `pairs`, the names of the pairs whose terms it swapped (in order of use)."""


class CounterfactualSwapper:
    """Swaps the terms of `TermPairs` in texts, in both directions, whole words only, keeping case.

    Args:
        pairs: a `TermPairs`, or what `TermPairs.resolve` takes ("builtin", a pairs file, `[(term, term)]`).

    Call `swap(text)`: the `Swap`, or None when `text` holds no term.
    """

    def __init__(self, pairs):
        self.pairs = TermPairs.resolve(pairs)
        # term (lowercase) -> (its counterpart, as listed, or None for a built-in pronoun's rule; the pair's name)
        self._targets = {}
        if self.pairs.builtin_pronouns:
            self._targets.update({"he": ("she", "he/she"), "she": ("he", "he/she"),
                                  "himself": ("herself", "himself/herself"), "herself": ("himself", "himself/herself"),
                                  "him": ("her", _HIM_HER), "hers": ("his", _HIS_HER),
                                  "her": (None, None), "his": (None, _HIS_HER)})
        for a, b in self.pairs.pairs:
            name = f"{a}/{b}"
            self._targets[a.lower()] = (b, name)
            self._targets[b.lower()] = (a, name)
        # Longest first: a multi-word term ("mr smith") wins over a term it starts with ("mr").
        alternatives = sorted(self._targets, key=len, reverse=True)
        words = "|".join(re.escape(term).replace(r"\ ", r"\s+") for term in alternatives)
        # A whole word: no letter or digit on either side, nor a letter and an apostrophe before ("O'Brien" holds
        # no "Brien"); a hyphen and a quote are edges ("ex-husband", "'He said'").
        self._pattern = re.compile(rf"(?<!\w)(?<!\w['’])(?:{words})(?!\w)", re.IGNORECASE)

    def swap(self, text):
        """The `Swap` of `text`, or None when no term occurs in it as a whole word."""
        used = []

        def replace(match):
            original = match.group(0)
            target, name = self._target(" ".join(original.lower().split()), match.string, match.end())
            if name not in used:
                used.append(name)
            return keep_case(original, target)

        swapped = self._pattern.sub(replace, text)
        return Swap(swapped, tuple(used)) if used else None

    def contains_term(self, text):
        """Whether `text` holds a term of the pairs as a whole word."""
        return self._pattern.search(text) is not None

    def _target(self, term, text, end):
        """`(counterpart, pair name)` of `term` found in `text` ending at `end` (the pronoun rule for her/his)."""
        target, name = self._targets[term]
        if target is not None:
            return target, name
        following = _NEXT_WORD.match(text, end)
        before_a_noun = following is not None and following.group(1).lower() not in FUNCTION_WORDS
        if term == "her":
            return ("his", _HIS_HER) if before_a_noun else ("him", _HIM_HER)
        return ("her" if before_a_noun else "hers"), _HIS_HER  # "his"


def keep_case(original, replacement):
    """`replacement` in the case of `original`: all capitals, a capital first letter, or lowercase.

    A mixed-case original ("McDonald") gives the replacement with its first letter capitalised.
    """
    letters = [c for c in original if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    if all(c.islower() for c in letters):
        return replacement.lower()
    return replacement
