"""The factuality part of the demo (a demo step, run by ``annotation_site.demo``): project ``demo-factuality`` over
the demo dataset's systems, answered by three simulated annotators (``simulation.py``) and imported through the
raw-labels import, so its agreement report has something to show."""

import numpy as np

from .agreement import project_report
from .labels import LabelSet
from .models import Project
from .projects import ProjectSpec, create_project
from .raw_labels import import_lines
from .simulation import simulated_lines

PROJECT = "demo-factuality"
ANNOTATORS = ("sim-annotator-1", "sim-annotator-2", "sim-annotator-3")
SEED = 2023


def add_project(dataset, progress=None):
    label_set = LabelSet.objects.filter(dataset=dataset).order_by("name").first()
    if label_set is None:
        return "skipped: the dataset has no labels to simulate annotators from"
    Project.objects.filter(name=PROJECT).delete()  # one left from an earlier demo on another dataset
    project = create_project(
        ProjectSpec(
            name=PROJECT,
            dataset=dataset,
            annotators_per_video=len(ANNOTATORS),
            description="Demo: answered by three simulated annotators who mostly agree with the demo's labels. "
            "Read the agreement report, aggregate, or invite yourself and annotate a video.",
        )
    )
    text = simulated_lines(label_set, ANNOTATORS, rng=np.random.default_rng(SEED), systems=list(project.systems.all()))
    project, counts = import_lines(
        text, project_name=PROJECT, dataset=dataset, filename="simulated annotators (load_demo)", provider="demo"
    )
    report = project_report(project)
    alpha = report["paragraph"]["ordinal"]
    shown = "n/a" if alpha is None or alpha != alpha else f"{alpha:.2f}"
    return (
        f"project {PROJECT!r}: {counts['submissions']} answers by {counts['annotators']} simulated annotators; "
        f"Krippendorff's alpha (paragraph, ordinal) {shown}"
    )
