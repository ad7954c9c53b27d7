"""Real text for the demo, fetched from PyPI the way a user would.

The vaderSentiment 3.3.2 source archive on PyPI carries the human-rated
sentence sets of Hutto & Gilbert (2014), "VADER: A Parsimonious Rule-based
Model for Sentiment Analysis of Social Media Text", ICWSM-14 (MIT licence):
movie-review snippets (10,605 sentences), New York Times editorial snippets,
Amazon review snippets and tweets, each line `id <TAB> mean rating <TAB> text`
with ratings from -4 to +4. The archive is checked against its published
SHA-256 before anything in it is read.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

VADER_SDIST = "vaderSentiment-3.3.2.tar.gz"
VADER_SHA256 = "5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9"
INNER_ARCHIVE = "vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz"
GROUND_TRUTH = {
    "movie_reviews": "movieReviewSnippets_GroundTruth.txt",
    "nyt_editorials": "nytEditorialSnippets_GroundTruth.txt",
    "amazon_reviews": "amazonReviewSnippets_GroundTruth.txt",
    "tweets": "tweets_GroundTruth.txt",
}


def default_cache_dir():
    return os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "keras-bert")


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_vader_sentiment(cache_dir=None):
    """Downloads (once) and unpacks the VADER ground-truth sentence files.

    Args:
        cache_dir: folder to keep the download in; defaults to ~/.cache/keras-bert.

    Returns:
        dict of set name ("movie_reviews", "nyt_editorials", "amazon_reviews",
        "tweets") -> path of its `id<TAB>rating<TAB>text` file.

    Raises:
        RuntimeError: pip could not fetch the archive, or its checksum is wrong.
    """
    cache_dir = cache_dir or default_cache_dir()
    target = os.path.join(cache_dir, "vader_sentiment")
    paths = {name: os.path.join(target, filename) for name, filename in GROUND_TRUTH.items()}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(cache_dir, exist_ok=True)
    sdist = os.path.join(cache_dir, VADER_SDIST)
    if not os.path.exists(sdist) or _sha256(sdist) != VADER_SHA256:
        print(f"Fetching {VADER_SDIST} from PyPI with pip ...", flush=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", cache_dir,
                   "vaderSentiment==3.3.2"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not os.path.exists(sdist):
            raise RuntimeError(f"`{' '.join(command)}` failed:\n{result.stderr[-2000:]}")
    actual = _sha256(sdist)
    if actual != VADER_SHA256:
        raise RuntimeError(f"{sdist} has SHA-256 {actual}, expected {VADER_SHA256}: refusing to read it.")
    staging = tempfile.mkdtemp(prefix=".vader-", dir=cache_dir)
    with tarfile.open(sdist) as outer:
        inner = outer.extractfile(INNER_ARCHIVE)
        with tarfile.open(fileobj=inner) as archive:
            for member in archive.getmembers():
                filename = os.path.basename(member.name)
                if filename in GROUND_TRUTH.values() and member.isfile():
                    with open(os.path.join(staging, filename), "wb") as out:
                        out.write(archive.extractfile(member).read())
    # Rename into place only when complete, so an interrupted fetch never leaves half a data set.
    if os.path.exists(target):
        shutil.rmtree(target)
    os.replace(staging, target)
    return paths


def read_rated_sentences(path):
    """[(text, mean_rating)] from a VADER ground-truth file (CRLF or LF, UTF-8 with replacement)."""
    rows = []
    with open(path, encoding="utf-8", errors="replace", newline=None) as f:
        for line_number, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) < 3:
                raise ValueError(f"{path}:{line_number}: expected `id<TAB>rating<TAB>text`, got {line[:80]!r}")
            rows.append(("\t".join(parts[2:]), float(parts[1])))
    return rows
