"""Definitions: every preset is valid, and a bad definition is refused with every problem named by its path."""

import pytest

from annotation_site.judgment_tasks import presets
from annotation_site.judgment_tasks.definition import DefinitionError, normalise


@pytest.mark.parametrize("key", list(presets.PRESETS))
def test_a_preset_question_does_not_say_optional_itself(key):
    """The page adds "(optional)" to a question that is not required: VC-Inspector's prompt "Comment (optional)"
    showed as "Comment (optional) (optional)"."""
    for question in normalise(presets.PRESETS[key]["definition"])["questions"]:
        assert "optional" not in question["prompt"].lower(), question


@pytest.mark.parametrize("key", list(presets.PRESETS))
def test_every_preset_is_a_valid_definition(key):
    definition = normalise(presets.PRESETS[key]["definition"])
    assert definition["questions"] and normalise(definition) == definition  # normalising is idempotent


def test_fifa_faithfulness_uses_the_rating_presets_scale_and_shows_the_prompt():
    from annotation_site.factuality.protocol import RATING_PRESETS

    definition = normalise(presets.PRESETS["fifa-faithfulness"]["definition"])
    assert definition["questions"][0]["scale"] == [list(p) for p in RATING_PRESETS["fifa"]["scale"]]
    assert [f["name"] for f in definition["fields"]] == ["prompt", "text"]
    assert definition["fields"][0]["optional"] is True


def test_problems_are_listed_with_their_paths():
    with pytest.raises(DefinitionError) as caught:
        normalise(
            {
                "fields": [{"name": "Caption"}, {"name": "video_id"}],
                "lists": [{"name": "facts", "marker": "TOOLONG"}],
                "questions": [
                    {"id": "q1", "type": "likert", "prompt": "Rate", "scale": [[1, "a"], [3, "b"]]},
                    {"id": "q2", "type": "choice", "prompt": "Pick", "options": [["x", "X"]], "per": "nope"},
                    {"id": "q3", "type": "pairs", "prompt": "Match", "left": "facts", "right": "facts"},
                    {"id": "q1", "type": "text", "prompt": "Again"},
                    {"id": "q5", "type": "count", "prompt": "", "min": 3, "max": 3, "extra": 1},
                ],
                "figures": [{"kind": "share", "question": "q1", "value": "x"}, {"kind": "nonsense"}],
                "colour": "red",
            }
        )
    problems = caught.value.problems
    expected = [
        "fields[0].name",
        "fields[1].name",
        "lists[0].marker",
        "questions[0].scale",
        "questions[1].options",
        "questions[1].per",
        "questions[2]: left and right",
        "questions[3].id",
        "questions[4].extra",
        "questions[4].prompt",
        "questions[4]: max",
        "figures[0].question",
        "figures[1].kind",
        "colour",
    ]
    for path in expected:
        assert any(p.startswith(path) for p in problems), (path, problems)


def test_defaults_are_filled_in():
    definition = normalise(
        {
            "questions": [
                {"id": "note", "type": "text", "prompt": "Anything?"},
                {"id": "n", "type": "count", "prompt": "How many people?"},
            ]
        }
    )
    assert definition["video"] is True and definition["fields"] == [] and definition["figures"] == []
    note, count = definition["questions"]
    assert note["required"] is False and note["max_length"] == 2000
    assert count["required"] is True and (count["min"], count["max"]) == (0, 100) and count["per"] is None


@pytest.mark.parametrize("value", [{}, [], ["facts"], {"facts": 1}])
def test_a_list_or_an_object_where_a_name_belongs_is_a_problem_of_its_path(value):
    """Names of lists (per, with, left, right) and a figure's question were looked up in a set or a dict: a list or
    an object there was a TypeError (unhashable), a 500 from the task pages and the API."""
    lists = [{"name": "facts"}, {"name": "questions"}]
    with pytest.raises(DefinitionError) as caught:
        normalise(
            {
                "lists": lists,
                "questions": [
                    {"id": "q1", "type": "choice", "prompt": "Pick", "options": [["x", "X"]], "per": value},
                    {
                        "id": "q2",
                        "type": "choice",
                        "prompt": "Pick",
                        "options": [["x", "X"]],
                        "per": "facts",
                        "with": value,
                    },
                    {"id": "q3", "type": "pairs", "prompt": "Match", "left": value, "right": "facts"},
                    {"id": "q4", "type": "pairs", "prompt": "Match", "left": "facts", "right": value},
                ],
                "figures": [{"kind": "precision_recall", "question": value}],
            }
        )
    problems = caught.value.problems
    for path in (
        "questions[0].per",
        "questions[1].with",
        "questions[2]: left and right",
        "questions[3]: left and right",
    ):
        assert any(p.startswith(path) for p in problems), (path, problems)
    assert any(p.startswith("figures[0].question: no question") for p in problems), problems
