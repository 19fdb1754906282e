"""Correlation reports: load the data (a fixed number of queries), run the analysis, and store it as a Report
with the snapshot of the data (counts and hashes), the parameters and the package versions.

A report with the same parameters over identical data is reused rather than computed again (the data hash
covers every caption key, human score and metric score, and each metric's version and parameters).
"""

import dataclasses
import hashlib
import io
import json
import math
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pandas as pd
from django.conf import settings

from annotation_site import spreadsheet_csv

from . import analysis, human, loaders, pairs, services
from .models import Metric, Report

#: The platform's own refusals of an analysis, in its words: what pages, the API and the command show to people.
#: Any other error (a ValueError of NumPy or SciPy included) is a fault, raised with its traceback, never shown as
#: a sentence to the researcher.
REFUSALS = (analysis.ParameterError, loaders.HumanScoresUnavailable)

PACKAGES = ("Django", "numpy", "scipy", "pandas", "matplotlib", "pycocoevalcap")


def versions():
    found = {"python": platform.python_version(), "captioneval": _git_commit()}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _git_commit():
    """The repository's commit, read from .git without running git (None outside a checkout)."""
    git = Path(settings.BASE_DIR) / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        pass
    return None


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _frame_digest(frame, columns):
    data = frame[columns].sort_values(columns[:1], kind="stable") if len(frame) else frame[columns]
    return _digest(data.to_csv(index=False, float_format="%.17g", na_rep="NA", lineterminator="\n"))


def _metric_info(metric_rows, names):
    by_name = {m.name: m for m in metric_rows}
    return {
        name: {
            "label": by_name[name].display_name,
            "source": by_name[name].source,
            "version": by_name[name].version,
            "parameters": by_name[name].parameters,
            "origin": by_name[name].origin,
        }
        for name in names
    }


def snapshot(frame, humans, metrics, metric_info, extra=None, hashed=None):
    """Counts and hashes of exactly the data an analysis used (``hashed``: more of it, e.g. which scores of the
    human captions were used, hashed into the data hash too)."""
    key_columns = ["caption_id", "video_id", "system"]
    hashes = {
        "captions": _frame_digest(frame, key_columns),
        "human": {h: _frame_digest(frame, ["caption_id", h]) for h in humans},
        "metrics": {m: _frame_digest(frame, ["caption_id", m]) for m in metrics},
        "metric_definitions": _digest(json.dumps(metric_info, sort_keys=True, default=str)),
        **({"more": _digest(json.dumps(hashed, sort_keys=True, default=str))} if hashed is not None else {}),
    }
    hashes["data"] = _digest(json.dumps(hashes, sort_keys=True))
    return analysis.clean(
        {
            "counts": {
                "captions": int(len(frame)),
                "videos": int(frame["video_id"].nunique()) if len(frame) else 0,
                "systems": int(frame["system"].nunique()) if len(frame) else 0,
                "human": {h: int(frame[h].notna().sum()) for h in humans},
                "scores": {m: int(frame[m].notna().sum()) for m in metrics},
            },
            "hashes": hashes,
            "metrics": metric_info,
            **(extra or {}),
        }
    )


def _choose_metrics(metric_rows, names):
    available = [m.name for m in metric_rows]
    if not names:
        if not available:
            raise loaders.HumanScoresUnavailable(
                "this dataset has no metric scores yet: compute or import some", field="metrics"
            )
        return available
    names = list(dict.fromkeys(names))  # a name given twice is one column (each column is one metric)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise analysis.ParameterError(
            "metrics",
            f"no scores for metric(s) {', '.join(unknown)} in this dataset (it has: {', '.join(available) or 'none'})",
        )
    return names


def _store(kind, dataset, parameters, snap, result, user, campaign=""):
    parameters_hash = _digest(json.dumps(parameters, sort_keys=True))
    existing = Report.objects.filter(
        kind=kind, dataset=dataset, parameters_hash=parameters_hash, data_hash=snap["hashes"]["data"]
    ).first()
    if existing is not None:
        return existing, False
    if callable(result):
        result = result()
    report = Report.objects.create(
        kind=kind,
        dataset=dataset,
        campaign=campaign,
        parameters=parameters,
        parameters_hash=parameters_hash,
        snapshot=snap,
        data_hash=snap["hashes"]["data"],
        versions=versions(),
        result=result,
        created_by=user,
    )
    return report, True


def _human_systems(frame, metric_rows, names, include_human):
    """The frame without (or, when asked, with valid scores of) the human systems' captions, and what was done;
    see human.select_human_systems."""
    how = {m.name: (m.parameters or {}).get("human_captions") for m in metric_rows}
    valid = {name for name, scored in how.items() if scored in services.HUMAN_SCORING_VALID}
    fewer = {name for name, scored in how.items() if scored == services.HUMAN_LEAVE_ONE_OUT}
    return human.select_human_systems(frame, names, include=include_human, valid=valid, fewer_references=fewer)


FEW_SYSTEMS = 4  # below this a system-level correlation cannot tell metrics apart


def few_systems_caution(result):
    """A caution for a system-level correlation table over fewer than FEW_SYSTEMS systems (None otherwise), for
    pages, the command's table and the CSV header: any two points correlate perfectly (r = +1 or -1), three
    give Kendall and Spearman only a few values and Pearson an interval nearly as wide as its range, and the
    Williams test needs four (its p-value is then left undefined, so no metric is found better than another)."""
    parameters = result.get("parameters") or {}
    if parameters.get("method") == "ranking_accuracy" or parameters.get("level") != "system":
        return None  # (a pairs report's n counts pairs, not systems)
    counts = [
        entry["n"] for levels in (result.get("metrics") or {}).values() for entry in levels.values() if entry.get("n")
    ]
    n = min(counts, default=None)
    if n is None or n >= FEW_SYSTEMS:
        return None
    return (
        f"Caution: only {n} systems. At system level any two systems correlate perfectly (r = +1 or -1), and with "
        "three these correlations, their intervals and the clusters cannot tell the metrics apart: use the "
        f"segment level, or at least {FEW_SYSTEMS} systems."
    )


def different_n_caution(result):
    """A caution when the metrics of a column were measured on different numbers of captions, systems or pairs
    (None otherwise): "best" then compares correlations over different captions, and a metric scored on a few of
    them (an imported file with a handful of scores) can be starred best with a perfect value."""
    parameters = result.get("parameters") or {}
    if parameters.get("method") == "ranking_accuracy":
        table = {m: levels.get("accuracy") or {} for m, levels in (result.get("metrics") or {}).items()}
        return pairs.different_pairs_caution(table)
    unit = "systems" if parameters.get("level") == "system" else "captions"
    columns = []
    for column in result.get("humans") or []:
        counts = {m: (levels.get(column) or {}).get("n") for m, levels in (result.get("metrics") or {}).items()}
        counts = {m: n for m, n in counts.items() if n}
        if len(set(counts.values())) > 1:
            columns.append(f"{column}: " + ", ".join(f"{m} {n}" for m, n in counts.items()))
    if not columns:
        return None
    return (
        f"Caution: the metrics were measured on different numbers of {unit} ({'; '.join(columns)}): their "
        f"correlations, and so the best one, are not over the same {unit}."
    )


def few_videos_caution(result, snapshot):
    """A caution when the bootstrap over the report's videos has fewer distinct resamples than it draws (None
    otherwise). ``v`` videos allow C(2v - 1, v) distinct resamples (multisets of v of them): 3 with two videos,
    462 with six, 1,716 with seven. Below the number drawn, the intervals and the bootstrap's significance
    clusters rest on a handful of values (two videos gave every metric the interval (1.000, 1.000) and a
    p-value of 0)."""
    videos = ((snapshot or {}).get("counts") or {}).get("videos")
    drawn = (result.get("parameters") or {}).get("resamples")
    if not videos or not drawn or videos > 40:  # (C(79, 40) is over 10^22: more than any number drawn)
        return None
    distinct = math.comb(2 * videos - 1, videos)
    if distinct >= drawn:
        return None
    return (
        f"Caution: only {videos} video{'s' if videos != 1 else ''}. The intervals and clusters come from "
        f"resampling videos, and {videos} allow only {distinct} distinct resample{'s' if distinct != 1 else ''} "
        f"(of the {drawn} drawn): they cannot be trusted. Use more videos."
    )


def cautions(result, snapshot=None):
    """``[(key, sentence)]``: every caution of a report's table, for pages (``key`` is the notice's id), the
    command's table and the CSV header."""
    found = [
        ("few-systems", few_systems_caution(result)),
        ("different-n", different_n_caution(result)),
        ("few-videos", few_videos_caution(result, snapshot)),
    ]
    return [(key, text) for key, text in found if text]


def describe_human_systems(description):
    """One sentence for pages, the command's table and the CSV header: what was done with the human systems."""
    if not description or not description.get("systems"):
        return "No human system among the captions."
    systems = ", ".join(description["systems"])
    count = description["captions"]
    unscored = description.get("metrics_unscored") or []
    without = description.get("metrics_without_them") or []
    if not description["included"] and (unscored or without):  # asked for, and no metric could take them
        reasons = []
        if unscored:
            reasons.append(
                f"none of its captions has a score of {', '.join(unscored)} (a computed metric scores a human "
                "caption against its video's other references: a video with no other reference leaves it unscored)"
            )
        if without:
            reasons.append(
                f"{', '.join(without)} {'is' if len(without) == 1 else 'are'} not known to score its captions "
                "leave-one-out or without references"
            )
        return f"Human system {systems} ({count} captions) asked for but not included: {'; '.join(reasons)}."
    if not description["included"]:
        return (
            f"Human system {systems} ({count} captions) left out: its captions are references and would be "
            "scored against themselves (include it explicitly to score it leave-one-out)."
        )
    fewer = description.get("metrics_fewer_references")
    if fewer is None:  # (a report stored before the description said which metrics used fewer references)
        fewer = description.get("metrics_with_them", [])
    free = [m for m in description.get("metrics_with_them", []) if m not in fewer]
    text = f"Human system {systems} ({count} captions) included"
    parts = []
    if fewer:
        parts.append(
            f"scored leave-one-out against the other references by {', '.join(fewer)} (never the reference a "
            "caption is): one reference fewer than the system captions are scored against (n - 1 of a video's "
            "n); BLEU, METEOR and ROUGE-L tend to score higher with more references, CIDEr-D averages over them "
            "with another IDF, and either way the human captions' scores - and the human system's mean and rank - "
            "are not comparable with the systems'"
        )
    if free:
        parts.append(f"scored without references by {', '.join(free)}")
    if description.get("metrics_without_them"):
        parts.append(
            "left out for "
            + ", ".join(description["metrics_without_them"])
            + " (its scores of human captions are not known to be leave-one-out or reference-free)"
        )
    if unscored:
        parts.append(f"not scored by {', '.join(unscored)} (none of its captions has a score of it)")
    return text + (", " + "; ".join(parts) if parts else "") + "."


def describe_human_pairs(description):
    """One sentence for pages, the command's table and the CSV header: what was done with the pairs that have a
    caption of a human system (pairs.select_human_pairs)."""
    if not description or not description.get("pairs"):
        return "No caption of a human system among the pairs."
    count, systems = description["pairs"], ", ".join(description["systems"])
    text = f"{count} pair{'s' if count != 1 else ''} with a caption of human system {systems} (a reference)"
    parts = []
    if same := description.get("metrics_same_references"):
        parts.append(
            f"both captions scored against the video's references without the human caption by {', '.join(same)} "
            "(never against itself, and the other caption not against it either)"
        )
    if free := description.get("metrics_reference_free"):
        parts.append(f"scored without references by {', '.join(free)}")
    if without := description.get("metrics_without_them"):
        parts.append(
            f"left out for {', '.join(without)} (imported scores: not known to score both captions of a pair "
            "against the same references without the human caption, or without references)"
        )
    for metric, missing in (description.get("not_scored") or {}).items():
        parts.append(
            f"{missing} of them left out for {metric}: not scored against those references (pairs imported after "
            f"{metric} was computed: compute it again)"
        )
    for metric, missing in (description.get("computed_before_pair_scores") or {}).items():
        parts.append(
            f"{missing} of them left out for {metric}: computed before pair scores existed, so not scored against "
            f"those references (compute {metric} again)"
        )
    for metric, unscored in (description.get("without_other_references") or {}).items():
        reason = "the video has no other reference"
        if metric == "cider":  # (computed CIDEr-D also leaves them unscored when its IDF corpus has one video)
            reason += ", or the dataset has too few videos for CIDEr-D's IDF"
        parts.append(f"{unscored} of them not scored by {metric}: {reason}")
    return text + ": " + "; ".join(parts) + "."


@dataclass
class _HumanFrame:
    """The data of a correlation with human scores: the analysis frame, its human columns, the chosen metrics and
    what was done with the human systems."""

    frame: pd.DataFrame
    humans: list
    metric_rows: list
    names: list
    human_systems: dict
    include_human: bool


def _human_frame(dataset, metrics, levels, human_scores, include_human, *, field, source, unscored):
    """The dataset's captions with ``human_scores(captions)`` and the chosen metrics' scores, without (or, when
    asked, with) the human systems. A frame without any human score is refused (analysis.NoHumanScores on
    ``field``): ``unscored`` says why when no caption has one, ``source`` names the scores when only captions of
    human systems left out have them."""
    metric_rows = loaders.metrics(dataset)
    names = _choose_metrics(metric_rows, metrics)
    captions = loaders.captions(dataset)
    frame = human.analysis_frame(captions, human_scores(captions), loaders.metric_scores(dataset, names))
    scored = len(frame)  # (captions with a human score)
    frame, human_systems = _human_systems(frame, metric_rows, names, include_human)
    if not len(frame):
        if not scored:
            raise analysis.NoHumanScores(field, unscored)
        raise analysis.NoHumanScores(
            field,
            f"{source} has scores only of captions of human systems, and none of them can be correlated: "
            + describe_human_systems(human_systems),
        )
    return _HumanFrame(frame, list(levels), metric_rows, names, human_systems, bool(include_human))


def _store_human_report(kind, dataset, data, *, parameters, extra, params, compute, user, campaign=""):
    """_store for a correlation with human scores (factuality, DA): the request's ``parameters`` followed by the
    metrics, include_human and the analysis parameters; the snapshot with ``extra``; the result of ``compute()``
    (run only when no equal report exists) with what was done with the human systems."""
    parameters = {**parameters, "metrics": data.names, "include_human": data.include_human, **params.as_dict()}
    snap = snapshot(data.frame, data.humans, data.names, _metric_info(data.metric_rows, data.names), extra)

    def run():
        result = compute()
        result["human_systems"] = data.human_systems
        return result

    return _store(kind, dataset, parameters, snap, run, user, campaign=campaign)


def factuality_report(
    dataset, *, label_set=None, metrics=None, params=None, user=None, progress=None, include_human=False
):
    """(report, created) for the correlation of the dataset's metrics with a factuality label set. Captions of
    human systems are left out unless ``include_human`` (then scored leave-one-out)."""
    params = params or analysis.Parameters()
    labels = loaders.label_set(dataset, label_set)
    data = _human_frame(
        dataset,
        metrics,
        human.FACTUALITY_LEVELS,
        lambda captions: loaders.factuality(labels),
        include_human,
        field="labels",
        source=f"label set {labels.name} of dataset {dataset.name}",
        unscored=f"label set {labels.name} of dataset {dataset.name} has no labels of the dataset's captions yet, so "
        "there is nothing to correlate: label captions (a factuality project on the dataset) or import labels, "
        "then correlate again",
    )
    return _store_human_report(
        Report.Kind.FACTUALITY,
        dataset,
        data,
        parameters={"kind": "factuality", "dataset": dataset.name, "label_set": labels.name},
        extra={
            "label_set": {"name": labels.name, "origin": labels.origin, "source": labels.source},
            "human_systems": data.human_systems,
        },
        params=params,
        compute=lambda: analysis.analyse(data.frame, data.humans, data.names, params, progress=progress),
        user=user,
    )


def da_report(campaign_name, *, dataset=None, metrics=None, params=None, user=None, progress=None, include_human=False):
    """(report, created) for the correlation of the campaign dataset's metrics with its DA scores. The human
    system (scored by people from the hidden originals) is left out unless ``include_human``. ``dataset``: the
    dataset the request names, if any; a campaign of another dataset is refused (ParameterError on
    ``campaign``), not correlated with that other dataset's metrics."""
    params = params or analysis.Parameters()
    campaign, caption_scores, system_scores, by_status = loaders.da_campaign(campaign_name)
    if dataset is not None and campaign.dataset_id != dataset.pk:
        raise analysis.ParameterError(
            "campaign",
            f"campaign {campaign.name} belongs to dataset {campaign.dataset.name}, not {dataset.name}: correlate "
            f"it under dataset {campaign.dataset.name}, or name a campaign of {dataset.name}",
        )
    if not caption_scores["z"].notna().any():  # (nothing computed on an empty frame; NumPy's words never shown)
        raise analysis.NoHumanScores("campaign", no_da_scores(campaign.name, by_status))
    dataset = campaign.dataset
    data = _human_frame(
        dataset,
        metrics,
        human.DA_LEVELS,
        lambda captions: human.da_caption_scores(caption_scores, captions),
        include_human,
        field="campaign",
        source=f"campaign {campaign.name}",
        unscored=f"campaign {campaign.name} has no DA scores of the captions of dataset {dataset.name}, so there "
        "is nothing to correlate",
    )
    system_table = system_scores.set_index("system")
    human_system = {level: system_table[level].astype(float) for level in data.humans}
    return _store_human_report(
        Report.Kind.DA,
        dataset,
        data,
        parameters={"kind": "da", "dataset": dataset.name, "campaign": campaign.name},
        extra={
            "campaign": campaign.name,
            "human_systems": data.human_systems,
            "system_scores": analysis.clean(system_scores.sort_values("system").to_dict(orient="records")),
        },
        params=params,
        compute=lambda: analysis.analyse(
            data.frame, data.humans, data.names, params, human_system=human_system, progress=progress
        ),
        user=user,
        campaign=campaign.name,
    )


def no_da_scores(campaign_name, by_status):
    """Why a DA campaign has no scores yet, with the workers per QC status ({status: count}) and what to do."""
    workers = sum(by_status.values())
    if not workers:
        return (
            f"campaign {campaign_name} has no DA scores yet: no worker has taken a HIT. Give workers the "
            "campaign's links (its page, or da_assign); scores appear once a worker completes enough HITs to pass "
            "quality control"
        )
    counts = ", ".join(f"{n} {status.replace('_', ' ')}" for status, n in by_status.items() if n)
    return (
        f"campaign {campaign_name} has no DA scores yet: no worker has passed quality control ({counts}). Only "
        "the judgments of workers who passed count, so scores appear once a worker passes: a worker in progress "
        "is judged when they complete their HIT, one with insufficient data needs more HITs for enough "
        "original/degraded pairs"
    )


def pairs_frame(pairs, scores, names):
    """Pairs [video_id, correct_id, foil_id] with columns ``<metric>:correct`` / ``<metric>:foil``."""
    frame = pairs[["video_id"]].copy()
    for name in names:
        column = scores[name] if name in scores else pd.Series(dtype=float)
        frame[f"{name}:correct"] = pairs["correct_id"].map(column).to_numpy(dtype=float)
        frame[f"{name}:foil"] = pairs["foil_id"].map(column).to_numpy(dtype=float)
    return frame


def _human_pairs(frame, pair_rows, dataset, pair_set, metric_rows, names):
    """The pairs frame with fair scores only for the pairs with a human caption, and what was done; see
    pairs.select_human_pairs. Computed metrics use their scores of both captions against the same references."""
    computed = {m.name for m in metric_rows if m.source == Metric.Source.COMPUTED}
    free = {m.name for m in metric_rows if (m.parameters or {}).get("human_captions") == "reference-free"}
    has_human = bool((pair_rows["correct_human"] | pair_rows["foil_human"]).any())
    scores = (
        loaders.pair_scores(dataset, pair_set, [n for n in names if n in computed])
        if has_human
        else pd.DataFrame(columns=["pair_id", "metric", "correct", "foil"])
    )
    # computed before pair scores existed: no "human_pairs" in the metric's parameters, and no PairScore rows
    before = {
        m.name for m in metric_rows if m.source == Metric.Source.COMPUTED and "human_pairs" not in (m.parameters or {})
    }
    return pairs.select_human_pairs(
        frame,
        pair_rows,
        scores,
        names,
        same_references=computed - free,
        reference_free=free,
        before_pair_scores=before,
    )


def pairs_report(dataset, pair_set, *, metrics=None, params=None, tie_credit=0.5, user=None):
    """(report, created) for the pairwise ranking accuracy of the dataset's metrics on a pair set. Pairs with a
    caption of a human system count only where both captions were scored against the same references without
    it (or without references); the report says what was done (``human_pairs``)."""
    # (pairs are compared by the paired bootstrap whatever the default test of a correlation would be: the stored
    # parameters say the test used, as the result does)
    params = dataclasses.replace(params or analysis.Parameters(), test="bootstrap")
    pair_rows = loaders.caption_pairs(dataset, pair_set)
    if not len(pair_rows):
        raise analysis.NoHumanScores(
            "pair_set",
            f"dataset {dataset.name} has no pair set {pair_set!r}: import its correct/foil pairs (caption_pairs "
            "--import, or the dataset page), then correlate again",
        )
    metric_rows = loaders.metrics(dataset)
    names = _choose_metrics(metric_rows, metrics)
    frame = pairs_frame(pair_rows, loaders.metric_scores(dataset, names), names)
    frame, human_pairs = _human_pairs(frame, pair_rows, dataset, pair_set, metric_rows, names)
    parameters = {
        "kind": "pairs",
        "dataset": dataset.name,
        "pair_set": pair_set,
        "metrics": names,
        "tie_credit": tie_credit,
        **params.as_dict(),
    }
    keyed = frame.assign(
        caption_id=pair_rows["correct_id"].astype(str) + "/" + pair_rows["foil_id"].astype(str), system="pair"
    )
    columns = [c for c in frame.columns if ":" in c]
    snap = snapshot(
        keyed,
        [],
        columns,
        _metric_info(metric_rows, names),
        {"pair_set": pair_set, "human_pairs": human_pairs},
        hashed=human_pairs,
    )

    def run():
        result = analysis.analyse_pairs(frame, names, params, tie_credit)
        result["human_pairs"] = human_pairs
        return result

    return _store(Report.Kind.PAIRS, dataset, parameters, snap, run, user)


def pair_set_reports(dataset, *, params=None, user=None):
    """[(pair set, report)] for every correct/foil pair set of the dataset, each stored (or reused) like any
    report; no pair sets or no metric scores: an empty list."""
    names = loaders.pair_sets(dataset)
    if not names or not Metric.objects.filter(dataset=dataset).exists():
        return []
    return [(name, pairs_report(dataset, name, params=params, user=user)[0]) for name in names]


def build_report(dataset, data, user=None, progress=None):
    """(report, created) for a request as the API and the correlate command take it: ``human`` (factuality, da or
    pairs), ``labels`` / ``campaign`` / ``pair_set``, ``metrics`` and the analysis parameters. What cannot apply
    is refused (analysis.ParameterError naming the field), never silently computed otherwise: a grouping at system
    level, a method or a grouping for pairs, a campaign of another dataset than ``dataset`` (None: the command
    without --dataset, which takes the campaign's)."""
    params = analysis.parameters_for(data["human"], data)
    metrics = data.get("metrics") or None
    include_human = bool(data.get("include_human"))
    if data["human"] == "da":
        if not data.get("campaign"):
            raise analysis.ParameterError("campaign", "human=da needs a campaign")
        return da_report(
            data["campaign"],
            dataset=dataset,
            metrics=metrics,
            params=params,
            user=user,
            progress=progress,
            include_human=include_human,
        )
    if data["human"] == "pairs":
        if not data.get("pair_set"):
            raise analysis.ParameterError("pair_set", "human=pairs needs a pair_set")
        return pairs_report(dataset, data["pair_set"], metrics=metrics, params=params, user=user)
    return factuality_report(
        dataset,
        label_set=data.get("labels") or None,
        metrics=metrics,
        params=params,
        user=user,
        progress=progress,
        include_human=include_human,
    )


def contract(report):
    """The report in the command/API contract shape:
    {"method", "level", "metrics": {metric: {human level: {"r", "ci": [lo, hi], "n"}}}, ...}."""
    result, parameters = report.result, report.result["parameters"]
    return {
        "method": parameters["method"],
        "level": report.level,
        "group_by": parameters.get("group_by"),
        "human": report.kind,
        "dataset": report.dataset.name,
        **({"campaign": report.campaign} if report.campaign else {}),
        "confidence": parameters["confidence"],
        "resamples": parameters["resamples"],
        "seed": parameters["seed"],
        "test": parameters["test"],
        "metrics": result["metrics"],
        "best": result["best"],
        "clusters": result["clusters"],
        **({"human_systems": result["human_systems"]} if "human_systems" in result else {}),
        **({"human_pairs": result["human_pairs"]} if "human_pairs" in result else {}),
        "report": report.pk,
    }


def table_rows(report):
    """One row per metric and human level: the table of the page, as plain rows."""
    result = report.result
    labels = {name: info.get("label", name) for name, info in report.snapshot.get("metrics", {}).items()}
    for metric, levels in result["metrics"].items():
        for level in result["humans"]:
            entry = levels.get(level, {})
            low, high = entry.get("ci") or [None, None]
            yield {
                "metric": metric,
                "label": labels.get(metric, metric),
                "human": level,
                "value": entry.get("r"),
                "ci_low": low,
                "ci_high": high,
                "n": entry.get("n"),
                "groups": entry.get("groups"),
                "epsilon": entry.get("epsilon"),
                "cluster": result["clusters"].get(level, {}).get(metric),
                "best": metric in result["best"].get(level, []),
            }


def table_csv(report):
    parameters = report.result["parameters"]
    out = io.StringIO()
    out.write(
        f"# CaptionEval report {report.pk}: {report.kind} on {report.dataset.name}; method "
        f"{parameters['method']}, level {report.level}, group by {parameters.get('group_by')}, "
        f"{parameters['resamples']} resamples of videos (seed {parameters['seed']}), "
        f"{round(100 * parameters['confidence'])}% CI, test {parameters['test']}; data "
        f"{report.data_hash[:12]}"
        + (f"; {describe_human_systems(report.result['human_systems'])}" if "human_systems" in report.result else "")
        + (f"; {describe_human_pairs(report.result['human_pairs'])}" if "human_pairs" in report.result else "")
        + "".join(f"; {text}" for _, text in cautions(report.result, report.snapshot))
        + "\n"
    )
    fields = ["metric", "label", "human", "value", "ci_low", "ci_high", "n", "groups", "epsilon", "cluster", "best"]
    writer = spreadsheet_csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    for row in table_rows(report):
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()
