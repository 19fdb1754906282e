"""Models of the factuality app: consolidated labels (``labels``), annotation projects (``projects``) and the
annotators' judgments (``judgments``)."""

from .judgments import (  # noqa: F401
    Assignment,
    CaptionRating,
    ParagraphJudgment,
    SentenceJudgment,
    SpanJudgment,
    Submission,
)
from .labels import ErrorSpan, LabelSet, ParagraphLabel, SentenceLabel  # noqa: F401
from .projects import Aggregation, Project, ProjectMember, ProjectVideo, ScaleAnchor  # noqa: F401
