from django.apps import AppConfig


class MetricsEvalConfig(AppConfig):
    """Automatic caption metrics and their correlation with the collected human judgments."""

    name = "metrics_eval"
    verbose_name = "Metric evaluation"
