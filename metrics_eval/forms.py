"""Forms of the metric pages (thin: the choices come from the dataset; checks live in analysis.Parameters)."""

from django import forms

from . import analysis, correlation, text_metrics
from .analysis import TESTS


class ReportForm(forms.Form):
    """The analysis shown on a report page (GET parameters)."""

    labels = forms.ChoiceField(label="Label set", required=False)
    metrics = forms.MultipleChoiceField(label="Metrics", required=False, widget=forms.CheckboxSelectMultiple)
    method = forms.ChoiceField(label="Method", choices=list(correlation.METHODS.items()), initial="pearson")
    level = forms.ChoiceField(
        label="Level", choices=[("segment", "segment (captions)"), ("system", "system")], initial="segment"
    )
    group_by = forms.ChoiceField(
        label="Group by",
        initial="none",
        choices=[("none", "no grouping"), ("video", "video (systems' captions of one video)"), ("system", "system")],
    )
    resamples = forms.IntegerField(label="Bootstrap resamples", min_value=10, max_value=100_000, initial=1000)
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**31 - 1, initial=0)
    confidence = forms.FloatField(label="Confidence", min_value=0.5, max_value=0.999, initial=0.95)
    test = forms.ChoiceField(
        label="Significance test",
        required=False,
        initial="",
        choices=[("", "default (Williams for Pearson, else bootstrap)")] + [(t, t) for t in TESTS],
    )
    include_human = forms.BooleanField(
        label="Include human systems (scored leave-one-out against the other references)", required=False
    )

    def __init__(self, data=None, *, label_sets=(), metric_names=()):
        if data is not None:  # a link may give only some parameters: show the others at their defaults
            data = data.copy()
            for name, field in self.base_fields.items():
                if name not in data and field.initial not in (None, ""):
                    data[name] = field.initial
        super().__init__(data)
        for field in self.fields.values():
            field.required = False  # a link may give only some parameters: the others keep their defaults
        self.fields["labels"].choices = [(name, name) for name in label_sets]
        self.fields["metrics"].choices = [(name, name) for name in metric_names]

    def clean(self):
        """What analysis.Parameters refuses (a grouping at system level, Williams with Spearman...) is an error of
        the field it names, shown with the form, rather than a table computed otherwise than asked."""
        cleaned = super().clean()
        try:
            analysis.Parameters(**self.analysis_kwargs())
        except analysis.ParameterError as exc:
            self.add_error(exc.field if exc.field in self.fields else None, str(exc))
        return cleaned

    def analysis_kwargs(self):
        """Parameters for analysis.Parameters (the initial values where the form was not submitted)."""
        data = self.cleaned_data if self.is_bound else {}
        return {
            key: (data.get(key) if data.get(key) not in (None, "") else self.fields[key].initial)
            for key in ("method", "level", "group_by", "resamples", "seed", "confidence", "test")
        }

    def human_included(self):
        return bool(self.is_bound and self.cleaned_data.get("include_human"))


class ComputeForm(forms.Form):
    metrics = forms.MultipleChoiceField(
        label="Metrics to compute",
        widget=forms.CheckboxSelectMultiple,
        choices=[(name, spec.label) for name, spec in text_metrics.TEXT_METRICS.items()],
        initial=["bleu4", "meteor", "rouge_l", "cider"],
    )
    reference_sets = forms.MultipleChoiceField(
        label="Reference sets (all when none is chosen)", required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, data=None, *, reference_sets=()):
        super().__init__(data)
        self.fields["reference_sets"].choices = [(name, name) for name in reference_sets]


class ScoreImportForm(forms.Form):
    file = forms.FileField(label="Score file (.csv, .json or .jsonl)")
    replace = forms.BooleanField(label="Replace metrics of the same name", required=False)
    version = forms.CharField(label="Version of the metric (optional)", required=False, max_length=200)


class PairsImportForm(forms.Form):
    prefix = "pairs"  # its fields sit on the page next to the score import form's
    file = forms.FileField(label="Pairs file (.csv, .json or .jsonl: video_id, correct, foil)")
    pair_set = forms.CharField(label="Name of the pair set", max_length=100, initial="foil")
    replace = forms.BooleanField(label="Replace a pair set of the same name", required=False)
