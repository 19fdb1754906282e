"""The FactVC release (../shared/datasets/factvc): one command computes BLEU-4, METEOR, ROUGE-L and CIDEr-D on
the imported ActivityNet-Fact / YouCook2-Fact captions and prints their correlation with the imported labels at
the paragraph, sentence and word levels; the page shows the same report.

The reference is built without the platform: human scores straight from factuality_annotation.json (brackets),
metric scores from pycocoevalcap called directly on the release's caption and reference files, Pearson's r from
SciPy. Skips cleanly when the shared folder is absent (fails in strict mode)."""

import io
import json
import re

import pytest
from django.core.management import call_command
from scipy import stats as scipy_stats

from annotation_site.factuality.models import SentenceLabel
from metrics_eval import human
from metrics_eval.models import Report
from tests.conftest import import_factvc

pytestmark = pytest.mark.django_db
METRICS = ["bleu4", "meteor", "rouge_l", "cider"]


def independent_scores(folder, names):
    """Per (video, system): human scores from the annotation file, metric scores from pycocoevalcap directly."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.meteor.meteor import Meteor
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    annotation = json.loads((folder / "factuality_annotation.json").read_text())
    reference_files = sorted((folder / "captions").glob("gt_*.json"))
    references = {}
    for path in reference_files:
        for video, text in json.loads(path.read_text()).items():
            references.setdefault(video, []).append(text)
    rows = {}
    for video, systems in annotation.items():
        for system, labels in systems.items():
            sentences = labels["sentences"]
            words = errors = 0
            for sentence in sentences:
                inside = False
                for token in sentence.split():
                    opens, closes = token.startswith("["), token.endswith("]")
                    inside = inside or opens
                    if any(ch.isalnum() for ch in token):
                        words += 1
                        errors += inside
                    inside = inside and not closes
            rows[(video, system)] = {
                "paragraph": labels["paragraph_score"],
                "sentence": 1 - sum("[" in s for s in sentences) / len(sentences),
                "word": 1 - errors / words,
                "text": " ".join(re.sub(r"[\[\]]", "", s) for s in sentences),
            }
    meteor = Meteor() if "meteor" in names else None
    for system in sorted({s for _, s in rows}):
        keys = [v for v, s in rows if s == system]
        gts = PTBTokenizer().tokenize({v: [{"caption": r} for r in references[v]] for v in keys})
        res = PTBTokenizer().tokenize({v: [{"caption": rows[(v, system)]["text"]}] for v in keys})
        results = {}
        if "bleu4" in names:
            results["bleu4"] = Bleu(4).compute_score(gts, res, verbose=0)[1][3]
        if "meteor" in names:
            results["meteor"] = meteor.compute_score(gts, res)[1]
        if "rouge_l" in names:
            results["rouge_l"] = Rouge().compute_score(gts, res)[1]
        if "cider" in names:
            results["cider"] = Cider().compute_score(gts, res)[1]
        for name, values in results.items():
            for video, value in zip(gts, values):
                rows[(video, system)][name] = float(value)
    return rows


@pytest.mark.parametrize(
    "folder, name, captions, checked",
    [
        ("activitynet", "anet-fact", 1200, METRICS),
        ("youcook2", "yc2-fact", 600, ["bleu4", "rouge_l", "cider"]),
    ],
)
def test_one_command_computes_and_correlates(shared_datasets, java, staff_client, folder, name, captions, checked):
    import_factvc(shared_datasets / folder, name)
    out = io.StringIO()
    call_command(
        "correlate",
        "--dataset",
        name,
        "--human",
        "factuality",
        "--metrics",
        ",".join(METRICS),
        "--method",
        "pearson",
        "--format",
        "json",
        "--compute",
        stdout=out,
        stderr=io.StringIO(),
    )
    body = json.loads(out.getvalue())
    assert (body["method"], body["level"], list(body["metrics"])) == ("pearson", "segment", METRICS)

    reference = independent_scores(shared_datasets / folder, checked)
    assert len(reference) == captions
    for metric in METRICS:
        for level in human.FACTUALITY_LEVELS:
            cell = body["metrics"][metric][level]
            assert cell["n"] == captions
            assert cell["ci"][0] < cell["r"] < cell["ci"][1]
            if metric in checked:
                x = [row[level] for row in reference.values()]
                y = [row[metric] for row in reference.values()]
                assert cell["r"] == pytest.approx(scipy_stats.pearsonr(x, y)[0], abs=1e-9), (metric, level)

    # the page shows the same stored report (same parameters, same data), with its charts
    query = "&".join(f"metrics={m}" for m in METRICS)
    html = staff_client.get(f"/metrics/datasets/{name}/?{query}").content.decode()
    assert f'data-report="{body["report"]}"' in html and Report.objects.filter(dataset__name=name).count() == 1
    for metric in METRICS:
        assert f"{body['metrics'][metric]['paragraph']['r']:.3f}" in html
    png = staff_client.get(f"/metrics/reports/{body['report']}/figures/scatter.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_word_definition_gives_the_published_share(shared_datasets):
    """13.5 % of ActivityNet-Fact words are inside error spans (FactVC paper and release README) with words being
    tokens that have a letter or digit - the definition of the word-level score."""
    import_factvc(shared_datasets / "activitynet", "anet")
    words = errors = 0
    for label in SentenceLabel.objects.select_related("sentence").prefetch_related("spans"):
        marked = {i for span in label.spans.all() for i in range(span.start, span.end)}
        flags = [i in marked for i, token in enumerate(label.sentence.tokens) if human.is_word(token)]
        words += len(flags)
        errors += sum(flags)
    assert round(100 * errors / words, 1) == 13.5
