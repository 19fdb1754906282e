"""Reading the FactVC layout (the invented mini fixture) and refusing malformed folders with located errors."""

import json
import shutil

import pytest

from annotation_site.interchange import factvc
from annotation_site.interchange.bundle import FormatError
from annotation_site.interchange.sources import DirectorySource
from tests.conftest import FIXTURES

MINI = FIXTURES / "factvc_mini"


@pytest.fixture
def folder(tmp_path):
    target = tmp_path / "factvc"
    shutil.copytree(MINI, target)
    return target


def read(path):
    return factvc.read_folder(DirectorySource(path))


def test_reads_videos_in_vids_order_systems_captions_and_labels():
    bundle = read(MINI)
    assert [v.video_id for v in bundle.videos] == ["v_Mm0nB9vC8xD", "v_Kx8pQ2mWz1A", "v_Zr3tYb7Lq0c", "v_Qq1wE2rT3yU"]
    assert bundle.systems == [("Alpha", False), ("Alpha_big", False)]
    first = bundle.captions[0]
    assert (first.video_id, first.system, first.paragraph_score) == ("v_Kx8pQ2mWz1A", "Alpha", 4)
    assert first.sentences[1].tokens == ["he", "cuts", "an", "onion", "with", "a", "knife", "."]
    assert first.sentences[1].spans == [(1, 4)] and first.sentences[1].error is True
    assert first.sentences[0].spans == [] and first.sentences[0].error is False
    assert bundle.counts() == {"videos": 4, "systems": 2, "captions": 6, "sentences": 12, "references": 3}


def test_timestamps_come_from_the_longest_matching_system_file():
    bundle = read(MINI)
    by_key = {(c.video_id, c.system): c for c in bundle.captions}
    alpha = by_key[("v_Kx8pQ2mWz1A", "Alpha")].sentences
    big = by_key[("v_Mm0nB9vC8xD", "Alpha_big")].sentences
    assert [(s.start, s.end) for s in alpha] == [(0.0, 2.5), (2.5, 6.0)]
    assert [(s.start, s.end) for s in big] == [(0.5, 3.0), (3.0, 7.25), (7.25, 9.0)]


def test_references_only_for_dataset_videos():
    bundle = read(MINI)
    assert {r.video_id for r in bundle.references} == {"v_Kx8pQ2mWz1A", "v_Zr3tYb7Lq0c", "v_Mm0nB9vC8xD"}
    assert {r.reference_set for r in bundle.references} == {"gt_test_para"}


def test_write_annotation_reproduces_the_file_byte_for_byte():
    assert factvc.write_annotation(read(MINI)) == (MINI / "factuality_annotation.json").read_text()


def rewrite(folder, mutate):
    path = folder / "factuality_annotation.json"
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data, indent=4))


def problems_of(folder):
    with pytest.raises(FormatError) as info:
        read(folder)
    return [str(p) for p in info.value.problems]


def test_bad_json_names_file_and_line(folder):
    path = folder / "factuality_annotation.json"
    lines = path.read_text().splitlines()
    lines[5] = lines[5].rstrip(",")  # drop the comma after the first sentence (line 6)
    path.write_text("\n".join(lines))
    (problem,) = problems_of(folder)
    assert problem.startswith("factuality_annotation.json, line 7: invalid JSON: Expecting ',' delimiter")


def test_a_problem_under_a_non_ascii_key_names_its_line(folder):
    """Keys were looked for ASCII-escaped only, so a file that writes them as they are got line 1."""
    path = folder / "factuality_annotation.json"
    data = json.loads(path.read_text())
    first = next(iter(data))
    data = {("vidé" if key == first else key): value for key, value in data.items()}
    system = next(iter(data["vidé"]))
    data["vidé"][system]["paragraph_score"] = 9
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False))
    (folder / "vids.txt").write_text((folder / "vids.txt").read_text().replace(first, "vidé"))
    lines = path.read_text().splitlines()
    expected = next(n for n, line in enumerate(lines, 1) if '"paragraph_score": 9' in line)
    problems = problems_of(folder)
    assert any(p.startswith(f"factuality_annotation.json, line {expected},") and "vidé" in p for p in problems), (
        problems
    )


def test_unbalanced_brackets_name_the_key_path_and_line(folder):
    rewrite(folder, lambda d: d["v_Zr3tYb7Lq0c"]["Alpha"]["sentences"].__setitem__(1, "she [jumps over a fence ."))
    (problem,) = problems_of(folder)
    text = (folder / "factuality_annotation.json").read_text().splitlines()
    line = next(i for i, row in enumerate(text, 1) if "jumps over a fence" in row)
    assert problem == (
        f"factuality_annotation.json, line {line}, 'v_Zr3tYb7Lq0c' > 'Alpha' > 'sentences' > [1]: "
        "unbalanced brackets: '[' at word 2 is never closed"
    )


def test_unknown_video_is_refused(folder):
    rewrite(folder, lambda d: d.update({"v_Unlisted0000": d["v_Kx8pQ2mWz1A"]}))
    (problem,) = problems_of(folder)
    assert "unknown video 'v_Unlisted0000': it is not listed in vids.txt" in problem


def test_missing_field_and_bad_score_are_all_reported(folder):
    def mutate(d):
        del d["v_Kx8pQ2mWz1A"]["Alpha"]["paragraph_score"]
        d["v_Zr3tYb7Lq0c"]["Alpha_big"]["paragraph_score"] = 7
        d["v_Mm0nB9vC8xD"]["Alpha"]["colour"] = "red"

    rewrite(folder, mutate)
    problems = problems_of(folder)
    assert len(problems) == 3
    assert any("'v_Kx8pQ2mWz1A' > 'Alpha': missing field paragraph_score" in p for p in problems)
    assert any("paragraph_score must be an integer from 1 to 5, not 7" in p for p in problems)
    assert any("unknown field colour" in p for p in problems)


def test_duplicate_video_key_is_refused(folder):
    path = folder / "factuality_annotation.json"
    text = path.read_text()
    block = '"v_Kx8pQ2mWz1A": ' + json.dumps(json.loads(text)["v_Kx8pQ2mWz1A"])
    path.write_text(text.rstrip()[:-1] + ",\n    " + block + "\n}")
    (problem,) = problems_of(folder)
    assert "key 'v_Kx8pQ2mWz1A' appears more than once" in problem


def test_bad_timestamp_in_system_file(folder):
    path = folder / "captions" / "alpha_test.json"
    data = json.loads(path.read_text())
    data["results"]["v_Kx8pQ2mWz1A"][0]["timestamp"] = [5, 1]
    path.write_text(json.dumps(data, indent=2))
    (problem,) = problems_of(folder)
    assert problem.startswith("captions/alpha_test.json, line ")
    assert "timestamp must be [start, end] seconds with start <= end, not [5, 1]" in problem


def test_missing_annotation_file(tmp_path):
    (problem,) = problems_of(tmp_path)
    assert "factuality_annotation.json: file not found" in problem


def test_duplicate_in_vids_txt(folder):
    (folder / "vids.txt").write_text("v_Mm0nB9vC8xD\nv_Kx8pQ2mWz1A\nv_Mm0nB9vC8xD\nv_Zr3tYb7Lq0c\n")
    (problem,) = problems_of(folder)
    assert problem == "vids.txt, line 3: video 'v_Mm0nB9vC8xD' is listed twice (first on line 1)"


@pytest.mark.parametrize("key", ["", "  ", "v1 "])
def test_empty_blank_or_padded_video_and_system_keys_are_refused(folder, key):
    """They were imported, and the dataset's JSONL export then could not be imported again."""

    def mutate(data):
        first = next(iter(data))
        data[key] = data[first]
        data[first] = {key: next(iter(data[first].values())), **data[first]}

    rewrite(folder, mutate)
    problems = problems_of(folder)
    assert any("video_id" in p and ("blank" in p or "spaces" in p) for p in problems), problems
    assert any("system" in p and ("blank" in p or "spaces" in p) for p in problems), problems
