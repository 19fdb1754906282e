"""import_dataset / export_dataset commands and the services behind them, on the database."""

import io
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation_site.corpus.models import Caption, Dataset, Reference, Sentence, System, Video
from annotation_site.factuality.models import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel
from annotation_site.interchange import jsonl
from annotation_site.interchange.bundle import CaptionData, DatasetBundle, SentenceData, VideoData
from annotation_site.interchange.services import export_bundle, import_bundle
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db
MINI = FIXTURES / "factvc_mini"
ALL_MODELS = (Dataset, System, Video, Caption, Sentence, Reference, LabelSet, ParagraphLabel, SentenceLabel, ErrorSpan)


def row_counts():
    return {model.__name__: model.objects.count() for model in ALL_MODELS}


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_factvc_import_stores_corpus_and_imported_labels():
    out, _ = run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    assert "Imported dataset 'mini': 4 videos, 2 systems, 6 captions, 12 sentences, 3 references" in out
    dataset = Dataset.objects.get(name="mini")
    assert list(dataset.videos.values_list("external_id", flat=True)) == [
        "v_Mm0nB9vC8xD",
        "v_Kx8pQ2mWz1A",
        "v_Zr3tYb7Lq0c",
        "v_Qq1wE2rT3yU",
    ]
    video = dataset.videos.get(external_id="v_Kx8pQ2mWz1A")
    assert video.url == "https://www.youtube.com/watch?v=Kx8pQ2mWz1A" and video.kind == "youtube"
    sentence = Sentence.objects.get(caption__video=video, caption__system__name="Alpha", index=1)
    assert sentence.text == "he cuts an onion with a knife ."  # stored without the brackets
    assert (sentence.start, sentence.end) == (2.5, 6.0)
    label_set = LabelSet.objects.get(dataset=dataset)
    assert (label_set.name, label_set.origin) == ("imported", "imported")
    label = SentenceLabel.objects.get(label_set=label_set, sentence=sentence)
    assert label.error is True
    assert list(label.spans.values_list("start", "end")) == [(1, 4)]
    assert ParagraphLabel.objects.get(label_set=label_set, caption=sentence.caption).score == 4
    assert SentenceLabel.objects.filter(label_set=label_set, error=True).count() == 6  # counted by hand in the fixture


def test_factvc_round_trip_through_the_database_is_byte_exact(tmp_path):
    run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    out = tmp_path / "factuality_annotation.json"
    run("export_dataset", "--format", "factvc", "--name", "mini", "--out", str(out))
    assert out.read_bytes() == (MINI / "factuality_annotation.json").read_bytes()


def test_jsonl_round_trip_through_the_database_is_exact(tmp_path):
    run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run("export_dataset", "--format", "jsonl", "--name", "mini", "--out", str(first))
    run("import_dataset", "--format", "jsonl", "--name", "mini2", str(first))
    run("export_dataset", "--format", "jsonl", "--name", "mini2", "--out", str(second))
    assert first.read_text() == second.read_text()
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert sum(1 for line in lines if line.get("type") == "video") == 4
    assert sum(1 for line in lines if "system" in line) == 6


@pytest.mark.parametrize(
    "mutation, message",
    [
        (lambda d: d["v_Zr3tYb7Lq0c"]["Alpha"]["sentences"].__setitem__(0, "a [woman is"), "unbalanced brackets"),
        (lambda d: d.update({"v_Stranger123": d["v_Kx8pQ2mWz1A"]}), "unknown video 'v_Stranger123'"),
        (lambda d: d["v_Kx8pQ2mWz1A"]["Alpha"].pop("sentences"), "missing field sentences"),
    ],
)
def test_bad_folder_is_refused_and_nothing_is_written(tmp_path, mutation, message):
    folder = tmp_path / "bad"
    shutil.copytree(MINI, folder)
    path = folder / "factuality_annotation.json"
    data = json.loads(path.read_text())
    mutation(data)
    path.write_text(json.dumps(data, indent=4))
    before = row_counts()
    with pytest.raises(CommandError) as info:
        run("import_dataset", "--format", "factvc", "--name", "bad", str(folder))
    assert "factuality_annotation.json, line " in str(info.value)
    assert message in str(info.value)
    assert "nothing was imported" in str(info.value)
    assert row_counts() == before


def test_bad_json_file_is_refused(tmp_path):
    folder = tmp_path / "bad"
    shutil.copytree(MINI, folder)
    (folder / "factuality_annotation.json").write_text('{"v_Kx8pQ2mWz1A": {"Alpha": ')
    with pytest.raises(CommandError, match=r"factuality_annotation.json, line 1: invalid JSON"):
        run("import_dataset", "--format", "factvc", "--name", "bad", str(folder))
    assert row_counts()["Dataset"] == 0


def test_failure_while_writing_rolls_everything_back(monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(ErrorSpan.objects, "bulk_create", explode)  # the last table written
    with pytest.raises(RuntimeError):
        run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    assert set(row_counts().values()) == {0}


def test_existing_name_needs_replace():
    run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    with pytest.raises(CommandError, match="already exists"):
        run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    first_id = Dataset.objects.get(name="mini").pk
    run("import_dataset", "--format", "factvc", "--name", "mini", "--replace", str(MINI))
    assert Dataset.objects.get(name="mini").pk != first_id
    assert Caption.objects.count() == 6


def test_a_replace_names_what_it_deleted_besides_the_corpus():
    """Replacing a dataset deleted its metric scores (and pair sets, other label sets...) without a word."""
    from metrics_eval import services as metric_services

    run("import_dataset", "--format", "factvc", "--name", "mini", str(MINI))
    dataset = Dataset.objects.get(name="mini")
    video = Video.objects.filter(dataset=dataset).first().external_id
    system = System.objects.filter(dataset=dataset).first().name
    metric_services.import_scores(dataset, f"video_id,system,metric,score\n{video},{system},bleu4,0.5\n", "m.csv")
    out, err = run("import_dataset", "--format", "factvc", "--name", "mini", "--replace", str(MINI))
    said = out + err
    assert "also deleted what belonged to the old one" in said and "1 metric scores" in said, said
    assert "captions" not in said.split("also deleted")[1]  # the corpus is replaced, not lost


def test_invalid_dataset_name_is_refused():
    with pytest.raises(CommandError, match="invalid dataset name 'has space'"):
        run("import_dataset", "--format", "factvc", "--name", "has space", str(MINI))


def test_export_unknown_dataset_and_unlabelled_factvc(tmp_path):
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        run("export_dataset", "--format", "factvc", "--name", "nope", "--out", str(tmp_path / "x"))
    path = tmp_path / "plain.jsonl"
    path.write_text('{"video_id": "v", "system": "s", "sentences": ["a b ."]}\n')
    run("import_dataset", "--format", "jsonl", "--name", "plain", str(path))
    assert not LabelSet.objects.exists()
    with pytest.raises(CommandError, match="no factuality labels"):
        run("export_dataset", "--format", "factvc", "--name", "plain", "--out", str(tmp_path / "x"))


def test_a_word_with_a_bracket_is_not_exported_as_factvc(tmp_path, staff_client):
    """FactVC marks error spans with brackets: the word "[open]" of a JSONL import was written as it is, and read
    back as a span on a sentence labelled correct ("the sign reads open ." with error 1). Every FactVC export now
    refuses such a dataset naming the sentence (command, page, API); JSONL still exports it whole."""
    path = tmp_path / "br.jsonl"
    path.write_text(
        '{"video_id": "v1", "system": "S", "paragraph_score": 5, "sentences": [{"text": "the sign reads [open] .", '
        '"error": 0, "spans": []}, {"text": "a man smiles .", "error": 1, "spans": [[1, 2]]}]}\n'
    )
    run("import_dataset", "--format", "jsonl", "--name", "br", str(path))
    out = tmp_path / "factuality_annotation.json"
    with pytest.raises(CommandError, match=r"video v1, system S, sentence 1: the word '\[open\]'.*Export JSONL"):
        run("export_dataset", "--format", "factvc", "--name", "br", "--out", str(out))
    assert not out.exists()
    page = staff_client.get("/datasets/br/export/factvc/", follow=True)
    assert page.redirect_chain and "the word &#x27;[open]&#x27;" in page.content.decode()
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_login(page.wsgi_request.user)
    answer = api.get("/api/datasets/br/export/?format=factvc")
    assert answer.status_code == 400 and "sentence 1: the word '[open]'" in answer.json()["detail"]
    run("export_dataset", "--format", "jsonl", "--name", "br", "--out", str(tmp_path / "br2.jsonl"))
    assert '"the sign reads [open] ."' in (tmp_path / "br2.jsonl").read_text()


def synthetic_bundle(n_videos, n_systems=3):
    bundle = DatasetBundle(systems=[(f"s{i}", False) for i in range(n_systems)])
    bundle.videos = [VideoData(video_id=f"v{i}") for i in range(n_videos)]
    for v in bundle.videos:
        for name, _ in bundle.systems:
            sentences = [
                SentenceData(
                    text="a b c d", tokens=["a", "b", "c", "d"], error=bool(j % 2), spans=[(1, 3)] if j % 2 else []
                )
                for j in range(3)
            ]
            bundle.captions.append(
                CaptionData(video_id=v.video_id, system=name, sentences=sentences, paragraph_score=3)
            )
    return bundle


@pytest.mark.parametrize("n_videos", [3, 60])
def test_import_and_export_use_a_constant_number_of_queries(n_videos, django_assert_max_num_queries):
    with django_assert_max_num_queries(20):
        result = import_bundle(synthetic_bundle(n_videos), name="big", source_format="jsonl")
    with django_assert_max_num_queries(10):
        bundle = export_bundle(result.dataset, label_set=result.label_set)
    assert len(bundle.captions) == n_videos * 3
    assert jsonl.write(bundle) == jsonl.write(synthetic_bundle(n_videos))


def test_a_label_set_name_or_source_past_its_column(tmp_path):
    """``import_dataset --labels`` past LabelSet.name's 100 characters, or a file whose path is longer than
    LabelSet.source's 500, was a database error on PostgreSQL (a traceback; 2026-11-27). The name is refused
    before anything is written; the source, a description, keeps its end (the file's name)."""
    line = {"video_id": "v1", "system": "S", "paragraph_score": 3, "sentences": [{"text": "a b .", "error": 0}]}
    deep = tmp_path / ("0" * 200) / ("1" * 200) / ("2" * 200)
    deep.mkdir(parents=True)
    path = deep / "labelled.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(CommandError, match="the label set name has 101 characters; at most 100 are allowed"):
        run("import_dataset", str(path), "--format", "jsonl", "--name", "d1", "--labels", "l" * 101)
    assert not Dataset.objects.exists()
    run("import_dataset", str(path), "--format", "jsonl", "--name", "d1", "--labels", "l" * 100)
    label_set = LabelSet.objects.get()
    assert label_set.name == "l" * 100
    assert len(label_set.source) == 500 and label_set.source.startswith("...")
    assert label_set.source.endswith("/labelled.jsonl") and str(path).endswith(label_set.source[3:])


def test_an_existing_name_is_refused_with_the_way_to_replace_on_each_entry_point(db):
    """The refusal said "(use --replace to replace it)" on the import page and the API too, which have no such
    option (a QA probe, 2026-11-28): it names the command's option, the API's field and the page's box."""
    from annotation_site.interchange.bundle import DatasetBundle
    from annotation_site.interchange.services import ImportRefused, import_bundle

    bundle = DatasetBundle(videos=[], systems=[], captions=[])
    import_bundle(bundle, name="twice", source_format="jsonl")
    with pytest.raises(ImportRefused) as refused:
        import_bundle(bundle, name="twice", source_format="jsonl")
    assert str(refused.value) == (
        "dataset 'twice' already exists: to replace it, repeat with --replace (API: replace=true; import page: the "
        "box “Replace an existing dataset”)"
    )
