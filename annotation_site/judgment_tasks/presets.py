"""Presets: the task definitions of the papers' human studies, as starting points (every text is editable until
work starts).

FIFA (Jing et al., "FIFA: Unified Faithfulness Evaluation Framework for Text-to-Video and Video-to-Text
Generation", sections 4.3-4.4, Tables 2-3, Appendix Q Figures 7-11), three annotators per item, majority vote:

- ``fifa-faithfulness`` (Fig. 7): a 1-5 Likert faithfulness score of a video-text pair, with the prompt that
  produced the text when there is one. Same scale as the factuality rating task's FIFA preset.
- ``fifa-question-quality`` (Fig. 8): tuples (facts written by people) and model-generated questions; the
  annotator enters the matching pairs. Table 2: precision = matched questions / questions, recall = matched
  tuples / tuples; Fleiss' kappa over the pair decisions.
- ``fifa-conversion`` (Fig. 10): per (tuple, question) pair, is the question a faithful, well-formed yes/no
  question for the tuple? Table 2: accuracy = share judged valid; kappa.
- ``fifa-dependency`` (Fig. 9): per listed dependency "tuple a depends on tuples b, c", valid or invalid.
  Table 2: valid ratio.
- ``fifa-verification`` (Table 3): yes/no questions about the video answered by people; the majority is the
  gold answer and imported VideoQA answers are scored by accuracy against it, per model and subset.

VC-Inspector (Dipta, Wu & Tripathi, arXiv 2509.16538): the model gives a 1-5 score and a free-text explanation
naming the wrong objects and actions; people judge the explanation (Krippendorff's alpha 0.46 in the paper).
``vc-inspector`` asks on a 1-5 Likert scale, ``vc-inspector-binary`` yes / no; both take an optional comment.
The item shows the video, the caption and the model's score and explanation; ``model`` names its version.

The anchor wordings between the papers' end points, the prompts and the instructions are ours.
"""

from annotation_site.factuality.protocol import RATING_PRESETS

YES_NO = [["yes", "Yes"], ["no", "No"]]
VALID = [["valid", "Valid"], ["invalid", "Invalid"]]
# The lists the FIFA presets show (the presets are deep-copied when a task is made from them).
FACTS = {"name": "tuples", "label": "Facts", "marker": "T"}
QUESTIONS = {"name": "questions", "label": "Questions", "marker": "Q"}
CORRECT_SCALE = [
    [1, "Wrong: it blames things that are right, or misses every real error."],
    [2, "Mostly wrong."],
    [3, "Partly right."],
    [4, "Mostly right; a detail is off or missing."],
    [5, "Right: it names exactly the real errors (or rightly finds none)."],
]

PRESETS = {
    "fifa-faithfulness": {
        "label": "FIFA faithfulness (Fig. 7): 1-5 score of a video-text pair",
        "title": "How faithful is the text to the video?",
        "definition": {
            "video": True,
            "fields": [
                {"name": "prompt", "label": "Prompt", "optional": True},
                {"name": "text", "label": "Text to judge"},
            ],
            "questions": [
                {
                    "id": "faithfulness",
                    "type": "likert",
                    "prompt": RATING_PRESETS["fifa"]["question"],
                    "scale": [list(point) for point in RATING_PRESETS["fifa"]["scale"]],
                }
            ],
        },
        "instructions": (
            "## What you do\nWatch the video, then read the text (and, when shown, the prompt that produced it). "
            "Rate how faithful the text is to the video: does everything it says appear in the video? 1 means "
            "completely hallucinated, 5 fully faithful. Do not penalise what the text leaves out.\n"
        ),
    },
    "fifa-question-quality": {
        "label": "FIFA question quality (Fig. 8): match questions to facts",
        "title": "Which questions ask about which facts?",
        "definition": {
            "video": False,
            "lists": [FACTS, QUESTIONS],
            "questions": [
                {
                    "id": "matches",
                    "type": "pairs",
                    "left": "tuples",
                    "right": "questions",
                    "prompt": "For each question, mark the facts it asks about.",
                }
            ],
            "figures": [{"kind": "precision_recall", "question": "matches", "name": "question quality"}],
        },
        "instructions": (
            "## What you do\nThe facts (tuples) were written by people from a text; the questions were generated "
            "by a model to check those facts. For each question, mark every fact it asks about (a question may "
            "match none, one or several facts). A question matches a fact when answering the question would tell "
            "whether the fact holds.\n"
        ),
    },
    "fifa-conversion": {
        "label": "FIFA fact-to-question conversion (Fig. 10): is each question right for its fact?",
        "title": "Is each question a faithful yes/no question for its fact?",
        "definition": {
            "video": False,
            "lists": [FACTS, QUESTIONS],
            "questions": [
                {
                    "id": "valid",
                    "type": "choice",
                    "per": "questions",
                    "with": "tuples",
                    "options": VALID,
                    "prompt": "Is the question a faithful, well-formed yes/no question for its fact?",
                }
            ],
            "figures": [{"kind": "share", "question": "valid", "value": "valid", "name": "accuracy"}],
        },
        "instructions": (
            "## What you do\nEach question was generated from the fact shown beside it. It is valid when it is a "
            "well-formed question answerable with yes or no, and asks exactly about that fact (nothing added, "
            "nothing left out, the answer would be yes if the fact holds).\n"
        ),
    },
    "fifa-dependency": {
        "label": "FIFA dependency validity (Fig. 9): is each dependency between facts valid?",
        "title": "Are the dependencies between facts valid?",
        "definition": {
            "video": False,
            "lists": [
                FACTS,
                {"name": "dependencies", "label": "Dependencies", "marker": "D"},
            ],
            "questions": [
                {
                    "id": "valid",
                    "type": "choice",
                    "per": "dependencies",
                    "options": VALID,
                    "prompt": "Is the dependency valid?",
                }
            ],
            "figures": [{"kind": "share", "question": "valid", "value": "valid", "name": "valid ratio"}],
        },
        "instructions": (
            '## What you do\nA dependency "T3 depends on T1, T2" says that fact T3 can only hold if T1 and T2 '
            "hold (an attribute of an entity depends on the entity; an action on the ones who act). Mark each "
            "dependency valid or invalid.\n"
        ),
    },
    "fifa-verification": {
        "label": "FIFA fact verification (Table 3): answer yes/no questions about the video",
        "title": "Answer each question about the video",
        "definition": {
            "video": True,
            "lists": [QUESTIONS],
            "questions": [
                {
                    "id": "answer",
                    "type": "choice",
                    "per": "questions",
                    "options": YES_NO,
                    "prompt": "What does the video show?",
                }
            ],
            "figures": [{"kind": "model_accuracy", "question": "answer", "name": "VideoQA accuracy"}],
        },
        "instructions": (
            "## What you do\nWatch the video, then answer each question with yes or no from what the video shows "
            "(not from what is likely). Your majority answers become the gold answers the VideoQA models are "
            "scored against.\n"
        ),
    },
    "vc-inspector": {
        "label": "VC-Inspector explanations (1-5): is the model's explanation right?",
        "title": "Is the evaluator's explanation right?",
        "definition": {
            "video": True,
            "fields": [
                {"name": "caption", "label": "Caption"},
                {"name": "score", "label": "Evaluator's score (1-5)"},
                {"name": "explanation", "label": "Evaluator's explanation"},
            ],
            "questions": [
                {
                    "id": "correct",
                    "type": "likert",
                    "scale": CORRECT_SCALE,
                    "prompt": "Is the explanation correct: does what it says about the caption hold for the video?",
                },
                {
                    "id": "names_errors",
                    "type": "likert",
                    "scale": CORRECT_SCALE,
                    "prompt": "Does it name the caption's real errors (wrong objects, wrong actions)?",
                },
                {"id": "comment", "type": "text", "prompt": "Comment", "required": False},
            ],
            "figures": [
                {"kind": "alpha_by_model", "question": "correct", "name": "agreement on correctness"},
                {"kind": "alpha_by_model", "question": "names_errors", "name": "agreement on errors named"},
            ],
        },
        "instructions": (
            "## What you do\nWatch the video and read the caption. An automatic evaluator scored the caption from "
            "1 to 5 and explained which objects or actions it got wrong. Judge the explanation, not the caption: "
            "is what it says true of the video and the caption, and does it name the caption's real errors?\n"
        ),
    },
}
PRESETS["vc-inspector-binary"] = {
    "label": "VC-Inspector explanations (yes / no): is the model's explanation right?",
    "title": PRESETS["vc-inspector"]["title"],
    "definition": {
        "video": True,
        "fields": PRESETS["vc-inspector"]["definition"]["fields"],
        "questions": [
            {
                "id": "correct",
                "type": "choice",
                "options": YES_NO,
                "prompt": PRESETS["vc-inspector"]["definition"]["questions"][0]["prompt"],
            },
            {
                "id": "names_errors",
                "type": "choice",
                "options": YES_NO,
                "prompt": PRESETS["vc-inspector"]["definition"]["questions"][1]["prompt"],
            },
            {"id": "comment", "type": "text", "prompt": "Comment", "required": False},
        ],
        "figures": PRESETS["vc-inspector"]["definition"]["figures"],
    },
    "instructions": PRESETS["vc-inspector"]["instructions"],
}


def choices():
    return [(key, preset["label"]) for key, preset in PRESETS.items()]
