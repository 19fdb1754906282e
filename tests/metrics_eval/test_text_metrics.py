"""Text metrics computed in the platform: hand-checked BLEU / ROUGE-L values, and every score equal to
pycocoevalcap called directly the documented way (tokenise, then score each system's captions as one result
file). These need Java (skipped only when it is truly absent; strict mode fails instead)."""

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation_site.corpus.models import Reference
from metrics_eval import loaders, services, text_metrics
from metrics_eval.models import Metric

from .conftest import stored_scores

pytestmark = pytest.mark.django_db
ALL = list(text_metrics.TEXT_METRICS)


def test_hand_checked_bleu_and_rouge(java, tiny_dataset):
    """vid-b / Alpha "the cat sat on the mat ." against its one reference "The cat is on the mat." (after PTB
    tokenisation: lower case, no punctuation). Unigrams: 5 of 6 match, bigrams 3 of 5 ("the cat", "on the",
    "the mat"), equal lengths so no brevity penalty: BLEU-1 = 5/6, BLEU-2 = sqrt(5/6 * 3/5) = sqrt(1/2).
    The longest common subsequence "the cat on the mat" has 5 words: P = R = 5/6, so ROUGE-L = 5/6."""
    services.compute_scores(tiny_dataset, ["bleu1", "bleu2", "rouge_l"])
    key = ("vid-b", "Alpha")
    assert stored_scores(tiny_dataset, "bleu1")[key] == pytest.approx(5 / 6, abs=1e-9)
    assert stored_scores(tiny_dataset, "bleu2")[key] == pytest.approx(0.5**0.5, abs=1e-9)
    assert stored_scores(tiny_dataset, "rouge_l")[key] == pytest.approx(5 / 6, abs=1e-9)


def test_scores_equal_pycocoevalcap_called_directly(java, tiny_dataset):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    result = services.compute_scores(tiny_dataset, ALL)
    assert result == {
        "captions": 12,
        "scored": {name: 12 for name in ALL},
        "without_references": 0,
        "human": {"captions": 0, "references_left_out": 0, "without_other_references": 0},
        "pairs_with_human_captions": {"pairs": 0, "without_other_references": 0},
    }

    captions = loaders.captions(tiny_dataset)
    texts = loaders.caption_texts(tiny_dataset)
    references = loaders.references(tiny_dataset)
    meteor = Meteor()
    for system, group in captions.groupby("system"):
        keys = [f"{row.video_id}" for row in group.itertuples()]
        gts = PTBTokenizer().tokenize({k: [{"caption": r} for r in references[k]] for k in keys})
        res = PTBTokenizer().tokenize(
            {row.video_id: [{"caption": texts[row.caption_id]}] for row in group.itertuples()}
        )
        _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
        expected = {f"bleu{n + 1}": bleu[n] for n in range(4)}
        expected["meteor"] = meteor.compute_score(gts, res)[1]
        expected["rouge_l"] = Rouge().compute_score(gts, res)[1]
        expected["cider"] = Cider().compute_score(gts, res)[1]
        for name, values in expected.items():
            ours = stored_scores(tiny_dataset, name)
            for video, value in zip(gts, values):
                assert ours[(video, system)] == pytest.approx(float(value), abs=1e-12), (name, video, system)
    metric = Metric.objects.get(dataset=tiny_dataset, name="cider")
    assert (metric.label, metric.source) == ("CIDEr-D", "computed")
    assert metric.version == f"pycocoevalcap {text_metrics.package_version()}"
    assert metric.parameters["reference_sets"] == ["gt_1", "gt_2"] and metric.parameters["sigma"] == 6.0


def test_reference_sets_can_be_chosen(java, tiny_dataset):
    services.compute_scores(tiny_dataset, ["rouge_l"], reference_sets=["gt_2"])
    # only vid-a and vid-d have a second reference: the other captions are not scored
    assert {video for video, _ in stored_scores(tiny_dataset, "rouge_l")} == {"vid-a", "vid-d"}
    assert Metric.objects.get(name="rouge_l").parameters["reference_sets"] == ["gt_2"]
    with pytest.raises(services.MetricError, match="unknown reference set"):
        services.compute_scores(tiny_dataset, ["rouge_l"], reference_sets=["gt_9"])


def test_requests_that_cannot_be_computed_are_refused(tiny_dataset):
    with pytest.raises(services.MetricError, match="unknown text metric"):
        services.compute_scores(tiny_dataset, ["bleu5"])
    with pytest.raises(services.MetricError, match="name the metrics"):
        services.compute_scores(tiny_dataset, [])
    Reference.objects.filter(video__dataset=tiny_dataset).delete()
    with pytest.raises(services.MetricError, match="has no reference captions"):
        services.compute_scores(tiny_dataset, ["cider"])


def test_missing_java_gives_a_clear_message(tiny_dataset, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(text_metrics.JavaMissing, match="needs Java .* apt-get install default-jre-headless"):
        services.compute_scores(tiny_dataset, ["bleu4"])
    with pytest.raises(CommandError, match="needs Java"):
        call_command("metric_scores", "--dataset", "tiny", "--compute", "bleu4", stderr=io.StringIO())
    assert not Metric.objects.exists()


def test_compute_command(java, tiny_dataset):
    out = io.StringIO()
    call_command("metric_scores", "--dataset", "tiny", "--compute", "bleu4,rouge_l", stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip() == "Stored scores for tiny: bleu4 12, rouge_l 12 of 12 captions"
    out = io.StringIO()
    call_command("metric_scores", "--dataset", "tiny", "--list", stdout=out)
    assert [line.split("\t")[:3] for line in out.getvalue().splitlines()] == [
        ["bleu4", "computed", "12 scores"],
        ["rouge_l", "computed", "12 scores"],
    ]


def test_tokenizer_gives_the_tokens_of_pycocoevalcaps_ptbtokenizer(java):
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    texts = {
        "a": ["A man's dog -- isn't it \"great\"? Yes!", "Two (2) kids; one ball..."],
        "b": ["Café au lait, s'il vous plaît.", "line one\nline two"],
        "c": ["THE CAT SAT ON THE MAT ."],
    }
    expected = PTBTokenizer().tokenize({k: [{"caption": t} for t in v] for k, v in texts.items()})
    assert text_metrics.ptb_tokenize(texts) == expected


def test_list_of_a_dataset_without_scores_says_what_to_do(tiny_dataset):
    """metric_scores --list printed nothing for a dataset without metrics; it says so on stderr (stdout holds the
    tab-separated rows scripts read, none here)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("metric_scores", "--dataset", "tiny", "--list", stdout=out, stderr=err)
    assert out.getvalue() == ""
    text = err.getvalue().strip()
    assert text.startswith("Dataset tiny has no metric scores yet.")
    assert "`manage.py metric_scores --dataset tiny --compute bleu4,meteor,rouge_l,cider`" in text
    assert "`manage.py metric_scores --dataset tiny --import FILE`" in text
