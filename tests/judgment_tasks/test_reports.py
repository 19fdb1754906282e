"""The reports on simulated annotations with a known truth, written by the test: three annotators work through
each FIFA task and the VC-Inspector check through the services (next item, submit); at most one annotator errs
on any unit, so the majority is the truth and the figures must equal the truth's, computed here from the truth
alone. Kappa and alpha are compared with independent references: statsmodels' fleiss_kappa on the counts
table built here, and the krippendorff package's reliability-data path on the matrices built here."""

import random

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from annotation_site.judgment_tasks import imports, reports
from annotation_site.judgment_tasks.models import Item

from .conftest import lines, work_through

pytestmark = pytest.mark.django_db


def noisy(truth_of_unit, units, annotators, flip, rng):
    """{annotator index: {unit: value}}: each unit is answered right by everyone except at most one annotator,
    who gives ``flip(value)`` on a unit with probability 1/3."""
    answers = {a: {} for a in range(annotators)}
    for unit in units:
        wrong = rng.randrange(annotators) if rng.random() < 1 / 3 else None
        for a in range(annotators):
            value = truth_of_unit[unit]
            answers[a][unit] = flip(value, rng) if a == wrong else value
    return answers


def fleiss_reference(values_by_annotator, units, categories):
    table = np.array(
        [[sum(1 for a in values_by_annotator if values_by_annotator[a][u] == c) for c in categories] for u in units]
    )
    return statsmodels_fleiss(table)


def alpha_reference(values_by_annotator, units, level, code=lambda v: v):
    matrix = np.array(
        [[code(values_by_annotator[a][u]) for u in units] for a in sorted(values_by_annotator)], dtype=float
    )
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)


def by_annotator_pk(simulated, annotators):
    """Answers keyed by the order in which this test's annotators are listed."""
    return {annotators[a].pk: values for a, values in simulated.items()}


def test_question_quality_precision_recall_and_kappa(make_task, annotator_accounts):
    rng = random.Random(7)
    annotators = annotator_accounts(3)
    truth, items = {}, []
    for n in range(12):
        tuples = [f"fact {n}.{i}" for i in range(rng.randint(2, 6))]
        questions = [f"question {n}.{j}?" for j in range(rng.randint(2, 6))]
        for i in range(len(tuples)):
            for j in range(len(questions)):
                truth[(f"q{n}", i, j)] = int(rng.random() < 0.3)
        items.append(
            {
                "item_id": f"q{n}",
                "video_id": f"c{n + 1}",
                "subset": "T2V" if n % 2 else "V2T",
                "tuples": tuples,
                "questions": questions,
            }
        )
    task = make_task("quality", "fifa-question-quality", items, members=annotators)
    simulated = noisy(truth, sorted(truth), 3, lambda v, r: 1 - v, rng)
    for a, annotator in enumerate(annotators):
        work_through(
            task,
            annotator,
            lambda item, a=a: {"matches": [[i, j] for (key, i, j), v in simulated[a].items() if key == item.key and v]},
            confirm=True,
        )

    report, labels, _ = reports.task_report(task)
    [figure] = report["figures"]
    questions = sum(len(item["questions"]) for item in items)
    tuples = sum(len(item["tuples"]) for item in items)
    matched_questions = len({(k, j) for (k, i, j), v in truth.items() if v})
    matched_tuples = len({(k, i) for (k, i, j), v in truth.items() if v})
    assert figure["questions"] == questions and figure["tuples"] == tuples
    assert figure["precision"] == matched_questions / questions
    assert figure["recall"] == matched_tuples / tuples
    odd = [item for n, item in enumerate(items) if n % 2]
    assert figure["subsets"]["T2V"]["precision"] == len(
        {(k, j) for (k, i, j), v in truth.items() if v and int(k[1:]) % 2}
    ) / sum(len(i["questions"]) for i in odd)
    [question] = report["questions"]
    units = sorted(truth)
    assert question["units"] == len(units) and question["ties"] == 0
    assert question["fleiss_kappa"] == pytest.approx(fleiss_reference(simulated, units, [0, 1]), abs=1e-12)
    assert question["alpha"]["nominal"] == pytest.approx(alpha_reference(simulated, units, "nominal"), abs=1e-12)
    assert labels["matches"]["label"].tolist() == [
        truth[(Item.objects.get(pk=r.item_id).key, r.left, r.right)] for r in labels["matches"].itertuples()
    ]


def _per_element_task(make_task, annotator_accounts, preset, list_name, options, *, with_list=None, seed=3):
    rng = random.Random(seed)
    annotators = annotator_accounts(3)
    truth, items = {}, []
    for n in range(15):
        size = rng.randint(1, 5)
        item = {
            "item_id": f"i{n}",
            "video_id": f"c{n + 1}",
            "subset": ["T2V", "V2T"][n % 2],
            list_name: [f"element {n}.{e}" for e in range(size)],
        }
        if with_list:
            item[with_list] = [f"partner {n}.{e}" for e in range(size)]
        if preset == "fifa-dependency":
            item["tuples"] = [f"fact {n}.{t}" for t in range(3)]
        for e in range(size):
            truth[(f"i{n}", e)] = options[0] if rng.random() < 0.8 else options[1]
        items.append(item)
    task = make_task(preset.replace("fifa-", ""), preset, items, members=annotators)
    simulated = noisy(truth, sorted(truth), 3, lambda v, r: options[1] if v == options[0] else options[0], rng)
    qid = task.definition["questions"][0]["id"]
    for a, annotator in enumerate(annotators):
        work_through(
            task,
            annotator,
            lambda item, a=a: {qid: [simulated[a][(item.key, e)] for e in range(len(item.lists[list_name]))]},
        )
    return task, truth, simulated, items


@pytest.mark.parametrize(
    "preset,list_name,with_list,name",
    [
        ("fifa-conversion", "questions", "tuples", "accuracy"),
        ("fifa-dependency", "dependencies", None, "valid ratio"),
    ],
)
def test_conversion_accuracy_and_dependency_valid_ratio(
    make_task, annotator_accounts, preset, list_name, with_list, name
):
    task, truth, simulated, _ = _per_element_task(
        make_task, annotator_accounts, preset, list_name, ["valid", "invalid"], with_list=with_list
    )
    report, _, _ = reports.task_report(task)
    [figure] = report["figures"]
    valid = sum(1 for v in truth.values() if v == "valid")
    assert figure["name"] == name and figure["units"] == len(truth) and figure["tied"] == 0
    assert figure["share"] == valid / len(truth)
    units = sorted(truth)
    [question] = report["questions"]
    assert question["fleiss_kappa"] == pytest.approx(
        fleiss_reference(simulated, units, ["valid", "invalid"]), abs=1e-12
    )
    code = {"valid": 0, "invalid": 1}
    assert question["alpha"]["nominal"] == pytest.approx(
        alpha_reference(simulated, units, "nominal", code=code.get), abs=1e-12
    )


def test_fact_verification_model_accuracy_per_model_and_subset(make_task, annotator_accounts):
    task, truth, simulated, items = _per_element_task(
        make_task, annotator_accounts, "fifa-verification", "questions", ["yes", "no"], seed=11
    )
    rng = random.Random(5)
    wrong = {
        model: {unit for unit in truth if rng.random() < rate}
        for model, rate in (("Video-LLaVA", 0.3), ("VideoChat2", 0.1))
    }
    flip = {"yes": "no", "no": "yes"}
    model_lines = [
        {
            "item_id": item["item_id"],
            "model": model,
            "answers": {
                "answer": [
                    flip[truth[(item["item_id"], e)]]
                    if (item["item_id"], e) in wrong[model]
                    else truth[(item["item_id"], e)]
                    for e in range(len(item["questions"]))
                ]
            },
        }
        for model in wrong
        for item in items
    ]
    assert imports.import_model_answers(task, lines(*model_lines)) == {"answers": 30, "models": 2}
    assert imports.import_model_answers(task, lines(*model_lines))["answers"] == 30  # again: same rows
    report, _, _ = reports.task_report(task)
    [figure] = report["figures"]
    assert figure["gold_units"] == len(truth)
    for model, errors in wrong.items():
        entry = figure["models"][model]
        assert entry["units"] == len(truth) and entry["missing"] == 0
        assert entry["accuracy"] == (len(truth) - len(errors)) / len(truth)
        for subset in ("T2V", "V2T"):
            units = [u for u in truth if int(u[0][1:]) % 2 == (0 if subset == "T2V" else 1)]
            assert entry["subsets"][subset]["accuracy"] == sum(u not in errors for u in units) / len(units)


def test_vc_inspector_alpha_overall_and_per_model_version(make_task, annotator_accounts):
    rng = random.Random(13)
    annotators = annotator_accounts(3)
    items, truth = [], {}
    for n in range(20):
        version = "vci-3b" if n < 10 else "vci-7b"
        items.append(
            {
                "item_id": f"e{n}",
                "video_id": f"c{n + 1}",
                "model": version,
                "caption": f"caption {n}",
                "score": str(rng.randint(1, 5)),
                "explanation": f"the caption gets object {n} wrong",
            }
        )
        truth[(f"e{n}", "correct")] = rng.randint(1, 5)
        truth[(f"e{n}", "names_errors")] = rng.randint(1, 5)
    task = make_task("vci", "vc-inspector", items, members=annotators)
    simulated = noisy(truth, sorted(truth), 3, lambda v, r: v % 5 + 1, rng)
    for a, annotator in enumerate(annotators):
        work_through(
            task,
            annotator,
            lambda item, a=a: {
                "correct": simulated[a][(item.key, "correct")],
                "names_errors": simulated[a][(item.key, "names_errors")],
                "comment": "fine" if a == 0 else "",
            },
        )
    report, labels, _ = reports.task_report(task)
    correct = next(f for f in report["figures"] if f["question"] == "correct")["by_model"]
    for version, keys in (
        ("all", [f"e{n}" for n in range(20)]),
        ("vci-3b", [f"e{n}" for n in range(10)]),
        ("vci-7b", [f"e{n}" for n in range(10, 20)]),
    ):
        units = [(key, "correct") for key in keys]
        for level in ("ordinal", "interval"):
            reference = krippendorff.alpha(
                reliability_data=np.array([[simulated[a][u] for u in units] for a in range(3)], dtype=float),
                level_of_measurement=level,
                value_domain=[1, 2, 3, 4, 5],
            )
            assert correct[version]["alpha"][level] == pytest.approx(reference, abs=1e-12)
    assert labels["correct"]["label"].tolist() == [truth[(f"e{n}", "correct")] for n in range(20)]
    comment = next(q for q in report["questions"] if q["id"] == "comment")
    assert comment == {"id": "comment", "type": "text", "prompt": "Comment", "answered": 20}


def test_faithfulness_median_with_ties_recorded(make_task, annotator_accounts):
    annotators = annotator_accounts(4)
    items = [{"item_id": f"f{n}", "video_id": f"c{n + 1}", "text": f"text {n}"} for n in range(3)]
    task = make_task("faith", "fifa-faithfulness", items, members=annotators, per_item=4)
    plan = {"f0": [5, 5, 4, 1], "f1": [2, 3, 3, 4], "f2": [1, 2, 4, 5]}
    for a, annotator in enumerate(annotators):
        work_through(task, annotator, lambda item, a=a: {"faithfulness": plan[item.key][a]})
    report, labels, _ = reports.task_report(task)
    rows = labels["faithfulness"].set_index("item_id")
    keys = dict(Item.objects.filter(task=task).values_list("pk", "key"))
    got = {keys[pk]: (row["label"], bool(row["tie"])) for pk, row in rows.iterrows()}
    assert got == {"f0": (4, True), "f1": (3, False), "f2": (2, True)}  # lower median on ties, recorded
    upper, upper_labels, _ = reports.task_report(task, median_ties="upper")
    assert sorted(upper_labels["faithfulness"]["label"].tolist()) == [3, 4, 5]
    [question] = report["questions"]
    assert question["ties"] == 2 and any("tied" in w for w in question["warnings"])
    matrix = np.array([[plan[k][a] for k in ("f0", "f1", "f2")] for a in range(4)], dtype=float)
    assert question["alpha"]["ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    )
    table = np.array([[sum(1 for a in range(4) if plan[k][a] == v) for v in range(1, 6)] for k in ("f0", "f1", "f2")])
    assert question["fleiss_kappa"] == pytest.approx(statsmodels_fleiss(table))


def test_majority_ties_give_no_label(make_task, annotator_accounts):
    annotators = annotator_accounts(2)
    items = [{"item_id": "d0", "video_id": "c1", "tuples": ["a", "b"], "dependencies": ["T2 depends on T1", "x"]}]
    task = make_task("dep-ties", "fifa-dependency", items, members=annotators, per_item=2)
    plans = [["valid", "valid"], ["invalid", "valid"]]
    for a, annotator in enumerate(annotators):
        work_through(task, annotator, lambda item, a=a: {"valid": plans[a]})
    report, labels, _ = reports.task_report(task)
    assert labels["valid"]["label"].tolist() == [None, "valid"]
    assert labels["valid"]["tie"].tolist() == [True, False]
    [figure] = report["figures"]
    assert (figure["units"], figure["tied"], figure["share"]) == (1, 1, 1.0)
