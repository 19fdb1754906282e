"""Correlate a dataset's metric scores with human judgments and print the table.

    python manage.py correlate --dataset NAME --human factuality --metrics bleu4,meteor,rouge_l,cider \
        --method pearson --format json
    python manage.py correlate --campaign NAME --human da --level system
    python manage.py correlate --dataset NAME --human pairs --pair-set foil
    python manage.py correlate --dataset NAME --metrics bleu4,meteor,rouge_l,cider --compute   # compute, then correlate

``--format json`` prints {"method", "level", "metrics": {metric: {human level: {"r", "ci": [lo, hi], "n"}}}, ...};
the report is stored (its id is in the output) with its data snapshot, parameters and package versions.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation_site.command_options import decimal_number, whole_number
from annotation_site.corpus.models import Dataset
from metrics_eval import analysis, correlation, loaders, reports, services, text_metrics
from metrics_eval.management.progress import progress_bar


class Command(BaseCommand):
    help = "Correlation of metric scores with human judgments (factuality, DA or correct/foil pairs)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", help="dataset name (for DA, the campaign's dataset is used)")
        parser.add_argument("--human", choices=["factuality", "da", "pairs"], default="factuality")
        parser.add_argument("--labels", help="factuality label set (default: imported, or the only one)")
        parser.add_argument("--campaign", help="DA campaign name (--human da)")
        parser.add_argument("--pair-set", help="correct/foil pair set (--human pairs)")
        parser.add_argument("--metrics", help="comma-separated metric names (default: all of the dataset)")
        parser.add_argument(
            "--method",
            choices=list(correlation.METHODS),
            default="",
            help="factuality and DA (default: pearson); not for --human pairs, measured by pairwise ranking accuracy",
        )
        parser.add_argument("--level", choices=list(correlation.LEVELS), default="segment")
        parser.add_argument(
            "--group-by",
            choices=list(correlation.GROUPINGS),
            default="none",
            help="segment level only: correlate within each video or system and average",
        )
        parser.add_argument(
            "--resamples", type=whole_number(10, 100_000), default=1000, help="bootstrap resamples of videos"
        )
        parser.add_argument("--seed", type=whole_number(0, 2**63 - 1), default=0)
        parser.add_argument("--confidence", type=decimal_number(0.5, 1), default=0.95)
        parser.add_argument(
            "--alpha", type=decimal_number(0, 1), default=0.05, help="significance level of the clusters"
        )
        parser.add_argument(
            "--test",
            choices=list(analysis.TESTS),
            default="",
            help="significance test between metrics (default: Williams for Pearson, else bootstrap)",
        )
        parser.add_argument(
            "--include-human",
            action="store_true",
            help="include the captions of human systems (left out by default: they are references), "
            "scored leave-one-out against the other references",
        )
        parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
        parser.add_argument(
            "--compute",
            action="store_true",
            help="first compute (and store) the text metrics named in --metrics, like metric_scores "
            "--compute, then correlate",
        )

    def handle(self, *args, **options):
        human = options["human"]
        if human == "da":
            if not options["campaign"]:
                raise CommandError("--human da needs --campaign NAME")
            dataset = None
        elif not options["dataset"]:
            raise CommandError("--dataset NAME is required")
        if options["dataset"]:
            dataset = Dataset.objects.filter(name=options["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset named {options['dataset']!r}")
        data = {
            "human": human,
            "labels": options["labels"],
            "campaign": options["campaign"],
            "pair_set": options["pair_set"],
            "metrics": services.parse_names(options["metrics"]) if options["metrics"] else [],
            **{key: options[key] for key in ("method", "level", "resamples", "seed", "confidence", "alpha", "test")},
            "group_by": options["group_by"],
            "include_human": options["include_human"],
        }
        try:
            analysis.parameters_for(human, data)  # what cannot apply is refused before anything is computed
            if options["compute"]:
                self._compute(dataset, data["metrics"], options)
            with progress_bar(self, "correlating", "correlation", options["verbosity"]) as progress:
                report, _ = reports.build_report(dataset, data, progress=progress)
        except analysis.ParameterError as exc:  # named by its option
            raise CommandError(f"--{exc.field.replace('_', '-')}: {exc}") from None
        except loaders.HumanScoresUnavailable as exc:  # (any other error is a fault, raised with its traceback)
            raise CommandError(str(exc)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(reports.contract(report), indent=2))
        elif options["format"] == "csv":
            self.stdout.write(reports.table_csv(report), ending="")
        else:
            self.stdout.write(self._table(report))

    def _compute(self, dataset, names, options):
        names = [n for n in names if n in text_metrics.TEXT_METRICS]
        if dataset is None or not names:
            raise CommandError(
                f"--compute needs --dataset and text metrics in --metrics ({', '.join(text_metrics.TEXT_METRICS)})"
            )
        try:
            with progress_bar(self, f"computing {', '.join(names)}", "step", options["verbosity"]) as progress:
                services.compute_scores(dataset, names, progress=progress)
        except (services.MetricError, text_metrics.JavaMissing) as exc:
            raise CommandError(str(exc)) from None

    def _table(self, report):
        result = report.result
        humans = result["humans"]
        parameters = result["parameters"]
        lines = [
            f"{correlation.METHODS.get(parameters['method'], parameters['method'])}, "
            f"{report.level} level"
            + (f", grouped by {parameters['group_by']}" if parameters.get("group_by") not in (None, "none") else "")
            + f"; {round(100 * parameters['confidence'])}% CI from {parameters['resamples']} resamples of "
            f"videos; * best, [k] significance cluster ({parameters['test']}); report {report.pk}"
        ]
        width = 40
        lines.append(f"{'metric':<12}" + "".join(f"{h:>{width}}" for h in humans))
        for metric, levels in result["metrics"].items():
            cells = []
            for human in humans:
                entry = levels.get(human) or {}
                if entry.get("r") is None:
                    cells.append(f"{'-':>{width}}")
                    continue
                low, high = entry["ci"]
                star = "*" if metric in result["best"].get(human, []) else " "
                cluster = result["clusters"].get(human, {}).get(metric, "")
                text = f"{entry['r']:.3f}{star}[{cluster}] ({_fmt(low)}, {_fmt(high)}) n={entry['n']}"
                cells.append(f"{text:>{width}}")
            lines.append(f"{metric:<12}" + "".join(cells))
        if "human_systems" in result:
            lines.append(reports.describe_human_systems(result["human_systems"]))
        if "human_pairs" in result:
            lines.append(reports.describe_human_pairs(result["human_pairs"]))
        lines.extend(text for _, text in reports.cautions(result, report.snapshot))
        return "\n".join(lines)


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"
