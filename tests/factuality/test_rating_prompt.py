"""FIFA faithfulness (Jing et al., Appendix Q Fig. 7) rates a video-text pair with the prompt that produced the
text: a caption's prompt comes in with the JSONL import, goes back out with the export, and the rating page
shows it above the caption (factuality pages never do: the ActivityNet-Fact protocol has no prompt)."""

import pytest
from django.urls import reverse

from annotation_site.factuality import projects
from annotation_site.factuality.assignment import next_assignment
from annotation_site.interchange import jsonl
from annotation_site.interchange.services import export_bundle

from .conftest import import_jsonl, lines

pytestmark = pytest.mark.django_db

PROMPTED = lines(
    {
        "video_id": "p1",
        "system": "VideoLLaMA",
        "prompt": "What is the woman doing?",
        "sentences": ["the woman is slicing bread ."],
    },
    {"video_id": "p1", "system": "Human", "sentences": ["a woman cuts bread ."]},
)


def test_a_caption_prompt_round_trips_through_jsonl():
    dataset = import_jsonl(PROMPTED, "prompted")
    text = jsonl.write(export_bundle(dataset))
    assert '"prompt": "What is the woman doing?"' in text and text.count('"prompt"') == 1
    with pytest.raises(Exception, match="prompt must be a string"):
        jsonl.read(lines({"video_id": "p1", "system": "S", "prompt": 3, "sentences": ["x ."]}))


def test_the_fifa_rating_page_shows_the_prompt(client, annotator_accounts):
    dataset = import_jsonl(PROMPTED, "prompted")
    [annotator] = annotator_accounts(1)
    rating = projects.create_project(projects.ProjectSpec(name="fifa", dataset=dataset, kind="rating", preset="fifa"))
    factual = projects.create_project(projects.ProjectSpec(name="fact", dataset=dataset))
    for project in (rating, factual):
        projects.add_member(project, annotator)
    client.force_login(annotator.user)
    page = client.get(reverse("factuality-annotate", args=[next_assignment(rating, annotator).pk])).content.decode()
    assert page.count('class="fact-prompt"') == 1 and "What is the woman doing?" in page
    assert "the prompt is shown above it" in rating.instructions
    page = client.get(reverse("factuality-annotate", args=[next_assignment(factual, annotator).pk])).content.decode()
    assert "What is the woman doing?" not in page
