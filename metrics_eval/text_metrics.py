"""Reference-based caption metrics per caption, with the coco-caption implementations (``pycocoevalcap``).

How each per-caption score is obtained (Chen et al. 2015, "Microsoft COCO Captions: data collection and
evaluation server"; the package's ``COCOEvalCap`` does the same steps for a whole result file):

1. Captions (a system's sentences joined by spaces) and the video's reference paragraphs are tokenised as the
   package's ``PTBTokenizer`` does (its Stanford CoreNLP 3.4.1 jar, ``-preserveLines -lowerCase``, its
   punctuation list removed) - Java. ``ptb_tokenize`` runs that same command but keeps its temporary file in a
   temporary folder: the package writes it next to the jar, inside site-packages, which an unprivileged
   container user cannot write to. The tests check the tokens are identical to ``PTBTokenizer``'s.
2. The captions are scored one system at a time, like one result file of that system (``gts``/``res`` keyed by
   caption, one hypothesis and the video's references each):
   - BLEU-1..4: ``Bleu(4).compute_score`` returns the corpus BLEU and, per caption, the sentence-level BLEU-n
     (``scores[n-1][i]``, brevity penalty against the closest reference length, the package's smoothing);
     those per-caption values are stored (Papineni et al. 2002).
   - METEOR 1.5: ``Meteor().compute_score`` - one score per caption from meteor-1.5.jar (``-l en -norm``;
     Denkowski & Lavie 2014) - Java.
   - ROUGE-L: ``Rouge().compute_score`` - LCS F-measure with beta 1.2, max over references (Lin 2004).
   - CIDEr-D: ``Cider().compute_score`` - the coco-caption CIDEr is CIDEr-D (n = 1..4, clipped counts, Gaussian
     length penalty sigma = 6, x10; Vedantam et al. 2015). Its IDF is computed over the references of the
     captions scored together, i.e. of the videos this system captioned: for a dataset where every system
     captions every video (ActivityNet-Fact, YouCook2-Fact) that is the IDF over the dataset's references.
     A system's mean per-caption CIDEr-D is its corpus CIDEr-D.
   The pairs of a correct/foil pair set that have a caption of a human system are scored as two more result
   files (``PairBatch``): the correct captions and the foils, each against the video's references without the
   human caption's own, so both captions of a pair see the same references. Their CIDEr-D IDF is that of the
   videos of the captions scored (one document per video, all its references; ``cider_with_corpus_idf``), not
   of the pairs scored together, so a pair's scores do not depend on the other pairs of its set.
"""

import functools
import re
import shutil
import subprocess
import tempfile
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

JAVA_HELP = (
    "pycocoevalcap needs Java (a JRE 8 or newer) for its PTB tokenizer and for METEOR, and no working 'java' "
    "was found on PATH. Install one (Debian/Ubuntu: apt-get install default-jre-headless) and try again."
)


class JavaMissing(RuntimeError):
    def __init__(self, detail=""):
        super().__init__(JAVA_HELP + (f" ({detail})" if detail else ""))


@dataclass(frozen=True)
class TextMetric:
    name: str
    label: str
    family: str  # bleu, meteor, rouge, cider
    parameters: dict


TEXT_METRICS = {
    **{
        f"bleu{n}": TextMetric(
            f"bleu{n}",
            f"BLEU-{n}",
            "bleu",
            {"n": n, "reference_length": "closest", "per_caption": "sentence-level BLEU"},
        )
        for n in range(1, 5)
    },
    "meteor": TextMetric("meteor", "METEOR", "meteor", {"jar": "meteor-1.5", "language": "en", "norm": True}),
    "rouge_l": TextMetric("rouge_l", "ROUGE-L", "rouge", {"beta": 1.2, "references": "max"}),
    "cider": TextMetric(
        "cider",
        "CIDEr-D",
        "cider",
        {"n": 4, "sigma": 6.0, "variant": "CIDEr-D", "idf": "references of the videos the system captioned"},
    ),
}
FAMILY_LABELS = {"bleu": "BLEU", "meteor": "METEOR", "rouge": "ROUGE-L", "cider": "CIDEr-D"}
TOKENIZER = "PTBTokenizer (Stanford CoreNLP 3.4.1, lower-cased, punctuation removed)"


@dataclass(frozen=True)
class PairBatch:
    """The result file of one side (``role``: correct or foil) of a pair set's pairs with a human caption; used
    as the "system" of those items in ``score_captions`` (never equal to a system name)."""

    pair_set: str
    role: str

    def __str__(self):
        return f"pair set {self.pair_set}, {self.role} captions"


def java_available():
    """(ok, detail): whether ``java -version`` runs."""
    java = shutil.which("java")
    if not java:
        return False, "java not found on PATH"
    try:
        run = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    first = (run.stderr or run.stdout).strip().splitlines()
    return run.returncode == 0, first[0] if first else f"exit status {run.returncode}"


def package_version():
    try:
        return metadata.version("pycocoevalcap")
    except metadata.PackageNotFoundError:
        return "not installed"


def ptb_tokenize(captions):
    """{key: [text, ...]} -> {key: [tokenised text, ...]}, exactly as pycocoevalcap's PTBTokenizer.tokenize."""
    from pycocoevalcap.tokenizer import ptbtokenizer as ptb

    jar = Path(ptb.__file__).resolve().parent / ptb.STANFORD_CORENLP_3_4_1_JAR
    keys = [key for key, texts in captions.items() for _ in texts]
    lines = "\n".join(text.replace("\n", " ") for texts in captions.values() for text in texts)
    with tempfile.TemporaryDirectory(prefix="captioneval-ptb-") as folder:
        path = Path(folder) / "captions.txt"
        path.write_bytes(lines.encode())
        run = subprocess.run(
            [
                "java",
                "-cp",
                str(jar),
                "edu.stanford.nlp.process.PTBTokenizer",
                "-preserveLines",
                "-lowerCase",
                str(path),
            ],
            capture_output=True,
        )
    output = run.stdout.decode().split("\n")
    if run.returncode != 0 or len(output) < len(keys):
        raise RuntimeError(f"the PTB tokenizer (Java) failed: {run.stderr.decode(errors='replace').strip()[-500:]}")
    tokenized = {}
    for key, line in zip(keys, output):
        tokenized.setdefault(key, []).append(" ".join(w for w in line.rstrip().split(" ") if w not in ptb.PUNCTUATIONS))
    return tokenized


def check_names(names):
    unknown = [n for n in names if n not in TEXT_METRICS]
    if unknown:
        raise ValueError(f"unknown text metric(s) {', '.join(unknown)}: use {', '.join(TEXT_METRICS)}")


def score_captions(captions, references, names, progress=None):
    """Scores per caption.

    ``captions``: list of (key, system, video_id, text) or (key, system, video_id, text, leave_out) (``system``:
    a system name or a ``PairBatch``: the captions scored together as one result file), where
    ``leave_out`` holds the indices (into the video's references) of references this caption must not be scored
    against (a human caption that *is* one of the references is scored leave-one-out against the others);
    ``references``: {video_id: [paragraph, ...]}; ``names``: metric names (TEXT_METRICS keys). Captions left
    without any reference are not scored.
    ``progress(done, total, message)`` is called after each step. Returns {name: {key: score}}.
    """
    check_names(names)
    ok, detail = java_available()
    if not ok:
        raise JavaMissing(detail)
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge

    scored = [c for c in captions if references_used(c, references.get(c[2]) or [])]
    families = [f for f in ("bleu", "meteor", "rouge", "cider") if any(TEXT_METRICS[n].family == f for n in names)]
    systems = sorted({c[1] for c in scored}, key=str)
    total, done = 1 + len(families) * len(systems), 0
    results = {name: {} for name in names}
    if not scored:
        return results

    def step(message):
        nonlocal done
        done += 1
        if progress:
            progress(done, total, message)

    to_tokenize = {f"c{i}": [c[3]] for i, c in enumerate(scored)}
    videos = sorted({c[2] for c in scored})
    to_tokenize.update({f"r{j}": list(references[v]) for j, v in enumerate(videos)})
    tokenized = ptb_tokenize(to_tokenize)
    reference_of = {v: tokenized[f"r{j}"] for j, v in enumerate(videos)}
    step("tokenized captions and references")

    # CIDEr-D IDF of the pairs' captions: one document per video of the captions (not pairs) scored, with its
    # reference set - fixed, so a pair's scores do not depend on the other pairs of its set.
    corpus = [reference_of[v] for v in sorted({c[2] for c in scored if not isinstance(c[1], PairBatch)})]
    meteor = Meteor() if "meteor" in families else None
    try:
        for family in families:
            for system in systems:
                keys = [i for i, c in enumerate(scored) if c[1] == system]
                gts = {f"c{i}": references_used(scored[i], reference_of[scored[i][2]]) for i in keys}
                res = {f"c{i}": tokenized[f"c{i}"] for i in keys}
                if family == "cider" and isinstance(system, PairBatch):
                    if len(corpus) >= MIN_IDF_VIDEOS:  # (else not scored: the IDF would be log(1) = 0)
                        values = cider_with_corpus_idf(gts, res, corpus)
                        for key, value in zip(gts, values):
                            results["cider"][scored[int(key[1:])][0]] = float(value)
                else:
                    _score_family(family, names, gts, res, scored, results, Bleu, Cider, Rouge, meteor)
                step(f"{FAMILY_LABELS[family]}: {system}")
    finally:
        if meteor is not None:
            _close_meteor(meteor)
    return results


MIN_IDF_VIDEOS = 2  # CIDEr-D's IDF over one video is log(1) = 0 for every n-gram: every score 0


def cider_with_corpus_idf(gts, res, corpus, n=4, sigma=6.0):
    """CIDEr-D scores (in the order of ``gts``) of the captions ``res`` against their references ``gts`` (tokenised,
    as for ``Cider().compute_score``) with the IDF of ``corpus`` (a list of documents, each a list of tokenised
    references) instead of the IDF of ``gts`` itself: pycocoevalcap's CiderScorer with its document frequency
    and ``ref_len`` (log of the number of documents) preset from the corpus. With ``corpus`` = the references of
    the captions scored, this is ``Cider().compute_score(gts, res)``."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    frequency = CiderScorer(n=n, sigma=sigma)
    for references in corpus:
        frequency += (None, list(references))
    frequency.compute_doc_freq()
    scorer = _preset_idf_scorer_class()(frequency.document_frequency, np.log(float(len(corpus))), n=n, sigma=sigma)
    for key in gts:
        scorer += (res[key][0], list(gts[key]))
    return [float(v) for v in scorer.compute_cider()] if len(gts) else []


@functools.cache
def _preset_idf_scorer_class():
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    class PresetIdfCiderScorer(CiderScorer):
        """CiderScorer whose document frequency and ``ref_len`` are given: ``compute_cider`` assigns ``ref_len``
        = log(number of its own documents) before scoring, which this class ignores (the corpus's is kept)."""

        def __init__(self, document_frequency, ref_len, n=4, sigma=6.0):
            super().__init__(n=n, sigma=sigma)
            self.document_frequency = defaultdict(float, document_frequency)
            self._corpus_ref_len = float(ref_len)

        @property
        def ref_len(self):
            return self._corpus_ref_len

        @ref_len.setter
        def ref_len(self, value):
            pass  # the corpus's ref_len stays

        def compute_doc_freq(self):
            pass  # preset

    return PresetIdfCiderScorer


def references_used(caption, references):
    """The references a caption is scored against: the video's, less those it must be left out of."""
    leave_out = caption[4] if len(caption) > 4 else ()
    return [r for j, r in enumerate(references) if j not in leave_out]


def normalise(text):
    """Text compared for identity with a reference: its letters and digits only (Unicode NFKC, case folded), so
    that a caption differing from a reference in case, spacing, punctuation or tokenisation (``"screen: red"``,
    ``"screen : red"``; ``"don't"``, ``"do n't"``) is the same text. The PTB tokenizer the metrics score with
    lower-cases, splits off and removes punctuation: such captions become identical tokens, and scored against
    that reference they would score (nearly) 1.0."""
    return "".join(_LETTERS_AND_DIGITS.findall(unicodedata.normalize("NFKC", text).casefold()))


_LETTERS_AND_DIGITS = re.compile(r"[^\W_]+")


def self_references(system, text, references):
    """Indices of the references (``[(reference_set, text), ...]`` of the caption's video) that a human
    caption *is*: the reference of the set the human system was made from (same name), or a reference with the
    same text (``normalise``: letters and digits only)."""
    own = normalise(text)  # (a caption without letters or digits is no reference's text)
    return frozenset(
        j
        for j, (reference_set, reference) in enumerate(references)
        if reference_set == system or (own and normalise(reference) == own)
    )


def _close_meteor(meteor):
    """Stop the METEOR Java process now rather than whenever the object is collected."""
    with meteor.lock:
        meteor.meteor_p.stdin.close()
        meteor.meteor_p.kill()
        meteor.meteor_p.wait()


def _score_family(family, names, gts, res, scored, results, Bleu, Cider, Rouge, meteor):
    order = list(gts)  # the scorers return scores in the order of the dict's keys
    if family == "bleu":
        _, per_n = Bleu(4).compute_score(gts, res, verbose=0)
        for name in names:
            if TEXT_METRICS[name].family == "bleu":
                n = TEXT_METRICS[name].parameters["n"]
                for key, value in zip(order, per_n[n - 1]):
                    results[name][scored[int(key[1:])][0]] = float(value)
        return
    if family == "meteor":
        _, values = meteor.compute_score(gts, res)
    elif family == "rouge":
        _, values = Rouge().compute_score(gts, res)
    else:
        _, values = Cider().compute_score(gts, res)
    name = {"meteor": "meteor", "rouge": "rouge_l", "cider": "cider"}[family]
    for key, value in zip(order, values):
        results[name][scored[int(key[1:])][0]] = float(value)
