"""Swapping term pairs in texts (issue #45 item 5): whole words, both directions, case kept, the pronoun rule;
reading and refusing pairs files; the swapped copies counterfactual augmentation adds to a training set."""

import dataclasses

import pytest

from keras_bert.fairness import CounterfactualAugmentation, CounterfactualSwapper, TermPairs
from keras_bert.fairness.counterfactual_swapper import keep_case

pytestmark = pytest.mark.only_backend(
    "torch", reason="pure Python string work (the re module), the same on every backend; runs in the shortest pass"
)


@pytest.fixture(scope="module")
def builtin():
    return CounterfactualSwapper("builtin")


@pytest.mark.parametrize("text, swapped", [
    ("He said so.", "She said so."),
    ("she said so", "he said so"),
    ("HE SAID SO", "SHE SAID SO"),
    ("He gave her his word.", "She gave him her word."),       # her: object; his: before a noun
    ("her performance is his best", "his performance is her best"),
    ("I saw her.", "I saw him."),
    ("the idea was his .", "the idea was hers ."),             # his alone: hers
    ("hers and his", "his and hers"),
    ("gave her her book", "gave him his book"),
    ("He's a man of few words", "She's a woman of few words"),  # an apostrophe ends the word
    ("John met Mary", "Mary met John"),                        # both directions in one pass
    ("JOHN's brother", "MARY's sister"),
    ("he himself", "she herself"),
    ("'He was great', her mother said", "'She was great', his father said"),  # quotes and hyphens are edges
    ("my ex-husband's father-in-law", "my ex-wife's mother-in-law"),
])
def test_builtin_pairs_swap_whole_words_both_ways_keeping_case(builtin, text, swapped):
    assert builtin.swap(text).text == swapped


def test_parts_of_words_and_texts_without_terms_are_left_alone(builtin):
    for text in ("the theme", "Sheila shed a hero's tears", "mankind", "a fine film", "Johnson"):
        assert builtin.swap(text) is None and not builtin.contains_term(text)


def test_the_swap_names_the_pairs_it_used_once_each_in_order(builtin):
    swap = builtin.swap("He told her that he and John liked her film.")
    assert swap.text == "She told him that she and Mary liked his film."
    assert swap.pairs == ("he/she", "him/her", "john/mary", "his/her(s)")


def test_a_users_pairs_file_swaps_its_terms_and_keeps_their_case(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("# my pairs\nnurse\tdoctor\n\nMcDonald\tO'Brien\nthe chef\tthe cook\n", encoding="utf-8")
    pairs = TermPairs.read(path)
    assert pairs.pairs == (("nurse", "doctor"), ("McDonald", "O'Brien"), ("the chef", "the cook"))
    assert pairs.source == str(path) and not pairs.builtin_pronouns and len(pairs) == 3
    swapper = CounterfactualSwapper(pairs)
    assert swapper.swap("The Nurse and mcdonald met the  chef.").text == "The Doctor and o'brien met the cook."
    assert swapper.swap("he said so") is None  # only the file's pairs
    assert CounterfactualSwapper([("nurse", "doctor")]).swap("DOCTOR").text == "NURSE"


def test_the_longest_term_wins_and_a_word_with_an_inner_apostrophe_stays_whole():
    # Each line fails on a hand-made mutation that the other fairness tests let pass: terms tried shortest first ("new"
    # before "new york"), a match allowed right after "o'" or "y'", a one-letter capital taken as all capitals.
    swapper = CounterfactualSwapper([("New York", "Los Angeles"), ("new", "old"), ("clock", "watch"), ("all", "none")])
    assert swapper.swap("I love New York and new shoes").text == "I love Los Angeles and old shoes"
    assert swapper.swap("at six o'clock, y'all") is None and swapper.swap("the clock").text == "the watch"
    assert keep_case("A", "the") == "The" and keep_case("AB", "cd") == "CD"


def test_builtin_and_a_file_join_into_one_list(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("nurse\tdoctor\n", encoding="utf-8")
    pairs = TermPairs.resolve(["builtin", str(path)])
    assert pairs.source == f"builtin + {path}" and len(pairs) == len(TermPairs.builtin()) + 1
    assert CounterfactualSwapper(pairs).swap("He is a nurse").text == "She is a doctor"


@pytest.mark.parametrize("content, message", [
    ("nurse\tdoctor\nnurse doctor\n", r"pairs.tsv:2: expected term<TAB>term, got 1 tab-separated field\(s\)"),
    ("a\tb\tc\n", r"pairs.tsv:1: expected term<TAB>term, got 3"),
    ("nurse\tNurse\n", r"pairs.tsv:1: the pair has the same term twice \('nurse', 'Nurse'\)"),
    ("nurse\tdoctor\ncook\tnurse\n", r"pairs.tsv:2: 'nurse' is already in a pair \(.*pairs.tsv:1 nurse/doctor\)"),
    ("nurse\t\n", r"pairs.tsv:1: '' is not a term"),
    ("nurse\tdoc.tor\n", r"pairs.tsv:1: 'doc.tor' is not a term"),
    ("# only a comment\n\n", r"pairs.tsv: no pairs"),
])
def test_a_malformed_pairs_file_is_refused_naming_the_line(tmp_path, content, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        TermPairs.read(path)


def test_unreadable_pairs_files_and_clashes_with_the_builtin_list_are_refused(tmp_path):
    (tmp_path / "latin1.tsv").write_bytes("caf\xe9\tbar\n".encode("latin-1"))
    with pytest.raises(ValueError, match="latin1.tsv: not UTF-8 text"):
        TermPairs.read(tmp_path / "latin1.tsv")
    with pytest.raises(ValueError, match="a folder; expected a pairs file"):
        TermPairs.read(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such pairs file"):
        TermPairs.resolve(str(tmp_path / "missing.tsv"))
    (tmp_path / "her.tsv").write_text("her\tthey\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"her.tsv:1: 'her' is already in a pair \(builtin him/her"):
        TermPairs.resolve(["builtin", str(tmp_path / "her.tsv")])
    with pytest.raises(ValueError, match="no term pairs"):
        TermPairs.resolve([])


@dataclasses.dataclass
class Example:
    text: str
    pair: str = None
    label: object = None
    source: str = ""


def test_augmentation_adds_one_swapped_copy_per_example_with_a_term_label_unchanged():
    examples = [Example("He was superb.", None, "positive", "train.tsv:2"),
                Example("a dull film", None, "negative", "train.tsv:3"),
                Example("a film", "John liked her", "negative", "train.tsv:4")]
    augmented, record = CounterfactualAugmentation("builtin").apply(examples)
    assert augmented[:3] == examples
    assert augmented[3:] == [Example("She was superb.", None, "positive", "train.tsv:2 (counterfactual)"),
                             Example("a film", "Mary liked him", "negative", "train.tsv:4 (counterfactual)")]
    assert record == {"pairs": "builtin", "num_pairs": len(TermPairs.builtin()), "examples": 3, "copies_added": 2,
                      "training_examples": 5}
