"""A whole correlation analysis as one pure function: frame in, JSON-ready result out.

For every metric and every human level: the correlation with its bootstrap confidence interval (resampling
videos), the best metric per level, the significance clusters per level, the system-level ranking of each metric
compared with the people's, and the points for the scatter plots.
"""

from dataclasses import asdict, dataclass

import numpy as np

from . import bootstrap, correlation, pairs, significance, stats

TESTS = ("williams", "bootstrap", "permutation")
FIELDS = ("method", "level", "group_by", "resamples", "seed", "confidence", "alpha", "test")
DEFAULT_METHOD = "pearson"
PAIRS_TESTS = ("", "bootstrap")  # a pairs report's clusters always come from the paired bootstrap


class ParameterError(ValueError):
    """A parameter that is invalid, or does not apply to the analysis asked for. ``field`` names it as the API
    and the forms do (``group_by``; the command's option is ``--group-by``), so each entry point can point at it:
    a 400 with the field, a form error on the field, the option in the command's error."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


class NoHumanScores(ParameterError):
    """An analysis with no human scores to correlate (a DA campaign no worker has passed quality control in yet, a
    label set without labels of the dataset's captions, a pair set without pairs): refused before anything is
    computed, with a sentence saying why and what to do next. ``field`` names where the scores were to come from
    (``campaign``, ``labels``, ``pair_set``), so every entry point answers it as the other refusals."""


@dataclass
class Parameters:
    method: str = DEFAULT_METHOD
    level: str = "segment"
    group_by: str = "none"
    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    test: str = ""  # "" = the default for the method and level

    def __post_init__(self):
        try:
            correlation.check_method(self.method)
        except ValueError as exc:
            raise ParameterError("method", str(exc)) from None
        if self.level not in correlation.LEVELS:
            raise ParameterError("level", f"level must be one of {', '.join(correlation.LEVELS)}")
        if self.group_by not in correlation.GROUPINGS:
            raise ParameterError("group_by", f"group_by must be one of {', '.join(correlation.GROUPINGS)}")
        if self.level == "system" and self.group_by != "none":
            # (refused, not reset to "none": a table computed otherwise than asked would pass for a grouped one)
            raise ParameterError(
                "group_by",
                f"grouping by {self.group_by} applies to the segment level only: a system-level correlation is "
                "over one mean score per system, with no groups to correlate within. Leave the grouping at none "
                f"for the system level, or ask for the segment level grouped by {self.group_by}",
            )
        if not 0 <= self.seed <= 2**63 - 1:
            raise ParameterError("seed", "seed must be a whole number from 0 to 2**63 - 1")
        if not 10 <= self.resamples <= 100_000:
            raise ParameterError("resamples", "resamples must be between 10 and 100000")
        if not 0.5 <= self.confidence < 1:
            raise ParameterError("confidence", "confidence must be at least 0.5 and below 1")
        if not 0 < self.alpha < 1:
            raise ParameterError("alpha", "alpha must be between 0 and 1")
        if not self.test:
            self.test = "williams" if self.williams_applies else "bootstrap"
        if self.test not in TESTS:
            raise ParameterError("test", f"test must be one of {', '.join(TESTS)}")
        if self.test == "williams" and not self.williams_applies:
            raise ParameterError(
                "test",
                "the Williams test compares Pearson correlations without grouping; use bootstrap or permutation",
            )
        if self.test == "permutation" and self.method == "accuracy_tc":
            raise ParameterError("test", "the permutation test is not offered for accuracy_tc; use bootstrap")

    @property
    def williams_applies(self):
        return self.method == "pearson" and (self.level == "system" or self.group_by == "none")

    def as_dict(self):
        return asdict(self)


def parameters_for(human, values):
    """The Parameters of a request (the command's options, the API's fields) for the human judgments ``human``
    (factuality, da or pairs). An empty or absent method is the default: Pearson for factuality and DA.

    Correct/foil pairs are measured by pairwise ranking accuracy over the pairs, whatever a correlation request
    says, so what does not apply to them is refused rather than ignored: a method, the system level, a grouping,
    a test other than the paired bootstrap (ParameterError naming the field)."""
    given = {key: values[key] for key in FIELDS if values.get(key) not in (None, "")}
    if human != "pairs":
        return Parameters(**given)  # (no method: DEFAULT_METHOD)
    what = (
        "correct/foil pairs are measured by pairwise ranking accuracy (the share of pairs whose correct caption "
        "a metric scores above its foil, a tie counting 1/2)"
    )
    if "method" in given:
        raise ParameterError(
            "method",
            f"{what}, not by a correlation method: leave the method out for pairs (methods apply to factuality and "
            f"DA judgments: {', '.join(correlation.METHODS)})",
        )
    if given.get("level", "segment") != "segment":
        raise ParameterError("level", f"{what}, pair by pair: there is no system level for pairs")
    if given.get("group_by", "none") != "none":
        raise ParameterError("group_by", f"{what}, over all pairs: they are not grouped (leave the grouping at none)")
    if given.get("test", "") not in PAIRS_TESTS:
        raise ParameterError(
            "test", f"{what}; the clusters of a pairs report come from the paired bootstrap: use bootstrap"
        )
    given.pop("test", None)  # bootstrap is what pairs always use: one shape of stored parameters, one stored report
    return Parameters(**given)  # (the stored parameters keep their former shape, so stored reports are reused)


def clean(value):
    """JSON-safe copy: NaN and infinities become None, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _estimates(frame, human, metrics, params, human_system, human_weight, counts, videos):
    """(point estimates, bootstrap samples) of every metric against one human column, on the same resamples."""
    if params.level == "segment":
        results = {m: correlation.segment_correlation(frame, human, m, params.method, params.group_by) for m in metrics}
        samples = bootstrap.bootstrap_segment_many(
            frame,
            human,
            metrics,
            params.method,
            params.group_by,
            counts,
            videos,
            epsilons={m: r.epsilon for m, r in results.items()},
        )
        return results, samples
    results, samples = {}, {}
    for metric in metrics:
        results[metric] = correlation.system_correlation(
            frame, human, metric, params.method, human_weight=human_weight, human_system=(human_system or {}).get(human)
        )
        samples[metric] = bootstrap.bootstrap_system(
            frame,
            human,
            metric,
            params.method,
            counts,
            videos,
            human_weight=human_weight,
            epsilon=results[metric].epsilon,
        )
    return results, samples


def _pvalue_function(frame, human, params, samples, human_system, human_weight):
    """better(a, b): p-value of "metric a correlates better with this human level than metric b"."""
    cache = {}

    def items(a, b):
        if params.level == "system":
            means_a = correlation.system_means(frame, human, a, human_weight=human_weight)
            means_b = correlation.system_means(frame, human, b, human_weight=human_weight)
            joined = means_a.join(means_b["metric"].rename("b"), how="inner")
            if human_system and human in human_system:
                joined["human"] = human_system[human].reindex(joined.index).astype(float)
            joined = joined.dropna()
            return joined["human"].to_numpy(), joined["metric"].to_numpy(), joined["b"].to_numpy(), None
        data = frame.loc[frame[[human, a, b]].notna().all(axis=1)]
        groups = None if params.group_by == "none" else data[correlation.GROUP_COLUMNS[params.group_by]].to_numpy()
        return data[human].to_numpy(float), data[a].to_numpy(float), data[b].to_numpy(float), groups

    def better(a, b):
        if (a, b) in cache:
            return cache[(a, b)]
        if params.test == "bootstrap":
            p = significance.paired_bootstrap_pvalue(samples[a], samples[b])
        else:
            h, ma, mb, groups = items(a, b)
            if params.test == "williams":
                r_a = stats.pearson_rows(h, ma)[0][0]
                r_b = stats.pearson_rows(h, mb)[0][0]
                r_ab = stats.pearson_rows(ma, mb)[0][0]
                p = significance.williams_test(r_a, r_b, r_ab, len(h), alternative="greater").pvalue
            else:
                p = significance.permutation_test(
                    h, ma, mb, params.method, group_codes=groups, n_resamples=params.resamples, seed=params.seed
                ).pvalue
        cache[(a, b)] = p if np.isfinite(p) else 1.0
        return cache[(a, b)]

    return better


def _system_block(frame, humans, metrics, human_system, human_weight):
    block = {"human": {}, "metrics": {}, "rankings": {}}
    for human in humans:
        block["rankings"][human] = {}
        for metric in metrics:
            means = correlation.system_means(frame, human, metric, human_weight=human_weight)
            if human_system and human in human_system:
                means["human"] = human_system[human].reindex(means.index).astype(float)
            means = means.dropna()
            if not len(means):
                continue
            block["human"].setdefault(human, means["human"].to_dict())
            block["metrics"].setdefault(metric, means["metric"].to_dict())
            block["rankings"][human][metric] = correlation.ranking_comparison(means["human"], means["metric"])
    return block


def _points(frame, humans, metrics):
    return {
        "video_id": frame["video_id"].tolist(),
        "system": frame["system"].tolist(),
        "human": {h: np.round(frame[h].to_numpy(dtype=float), 6).tolist() for h in humans},
        "metrics": {m: np.round(frame[m].to_numpy(dtype=float), 6).tolist() for m in metrics},
    }


def analyse(frame, humans, metrics, params, *, human_system=None, human_weight=None, progress=None):
    """Correlate each metric column with each human column of ``frame`` (see correlation.py for the frame).

    ``human_system``: {human column: Series of system scores} replacing the system means of the captions'
    human scores at system level; ``human_weight``: column weighting the captions' human scores in system means;
    ``progress(done, total)`` is called after each correlation.
    """
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), params.resamples, params.seed)
    table, clusters, best = {m: {} for m in metrics}, {}, {}
    for human in humans:
        results, samples = _estimates(frame, human, metrics, params, human_system, human_weight, counts, videos)
        for metric in metrics:
            result = results[metric]
            low, high = bootstrap.percentile_interval(samples[metric], params.confidence)
            entry = {"r": result.value, "ci": [low, high], "n": result.n}
            if params.level == "segment" and params.group_by != "none":
                entry["groups"] = result.groups
            if result.epsilon is not None:
                entry["epsilon"] = result.epsilon
            table[metric][human] = entry
            if progress:
                progress(sum(len(table[m]) for m in metrics), len(humans) * len(metrics))
        values = {m: table[m][human]["r"] for m in metrics}
        finite = [v for v in values.values() if np.isfinite(v)]
        best[human] = [m for m, v in values.items() if finite and np.isfinite(v) and v == max(finite)]
        better = _pvalue_function(frame, human, params, samples, human_system, human_weight)
        clusters[human] = significance.significance_clusters(values, better, params.alpha)
    return clean(
        {
            "parameters": params.as_dict(),
            "humans": list(humans),
            "metrics": table,
            "best": best,
            "clusters": clusters,
            "systems": _system_block(frame, humans, metrics, human_system, human_weight),
            "points": _points(frame, humans, metrics),
        }
    )


def analyse_pairs(frame, metrics, params, tie_credit=0.5):
    """Pairwise ranking accuracy on correct/foil pairs (frame of pairs.py), with the same parameters."""
    videos = sorted(frame["video_id"].unique())
    counts = bootstrap.video_resamples(len(videos), params.resamples, params.seed)
    table = pairs.accuracy_table(frame, metrics, counts, videos, params.confidence, tie_credit)
    values = {m: table[m]["r"] for m in metrics}
    finite = [v for v in values.values() if np.isfinite(v)]
    ranks = significance.significance_clusters(
        values, pairs.common_pairs_pvalue(frame, counts, videos, tie_credit), params.alpha
    )
    return clean(
        {
            "parameters": {
                **params.as_dict(),
                "method": "ranking_accuracy",
                "test": "bootstrap",
                "tie_credit": tie_credit,
            },
            "humans": ["accuracy"],
            "metrics": {m: {"accuracy": table[m]} for m in metrics},
            "best": {"accuracy": [m for m, v in values.items() if finite and v == max(finite)]},
            "clusters": {"accuracy": ranks},
            "systems": {"human": {}, "metrics": {}, "rankings": {}},
            "points": {},
        }
    )
