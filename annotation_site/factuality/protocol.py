"""The ActivityNet-Fact annotation protocol (Liu & Wan, "Models See Hallucinations: Evaluating the Factuality
in Video Captioning", EMNLP 2023, section 3) and the rating scales built from the same pieces.

The factuality Likert anchors are the protocol's own and fixed (changing them would make projects
incomparable); a project's instructions text starts as ``DEFAULT_INSTRUCTIONS`` and is editable. Rating
projects carry their own scale and anchors (``RATING_PRESETS`` are the starting points).
"""

FACTUALITY_SCALE = [
    (5, "No obvious factual errors."),
    (4, "A few minor errors; mostly consistent with the video."),
    (3, "Some errors, but the consistent content is more."),
    (2, "More errors; the inconsistent content is more."),
    (1, "A lot of severe errors; it hardly describes the video."),
]
FACTUALITY_ANCHORS = dict(FACTUALITY_SCALE)

DEFAULT_INSTRUCTIONS = """\
## What you do
Watch the video first (you can slow it down, step through frames and jump back). Then read each caption
paragraph written for it. The paragraphs come from different captioning systems, in random order, without their
names. Judge only what each paragraph says: is it true of the video? Do not judge what it leaves out
(completeness does not count), its grammar or its style.

## For every paragraph: a factuality score
- 5: no obvious factual errors.
- 4: a few minor errors; mostly consistent with the video.
- 3: some errors, but the consistent content is more.
- 2: more errors; the inconsistent content is more.
- 1: a lot of severe errors; it hardly describes the video.

## For every sentence: factual or not
Flag a sentence when it contains at least one factual error (label 1); leave it unflagged when everything it says
is true of the video (label 0). A word shown as UNK (an unknown word) always counts as an error.

## Inside every flagged sentence: the wrong words
Mark the words or phrases that are wrong, as few words as possible: the wrong object, person, action, number or
attribute, not the whole sentence. Drag across the words, or click the first and then the last word. Marking
words flags the sentence. A flagged sentence needs at least one marked span.

## Worked examples
The video: a woman on a beach throws a red frisbee; a dog runs after it and catches it.

- "a woman is standing on the beach . she throws a frisbee to a [cat] ." Only "cat" is wrong: the first
  sentence is factual, the second is flagged with one span. Paragraph score 4.
- "a woman throws a [blue] frisbee . the dog [drops] it ." Two wrong words in two sentences; most of the
  content is still right. Paragraph score 3.
- "[a man] is [playing volleyball] on the beach ." The person and the action are wrong: two spans, one sentence,
  little of the content is right. Paragraph score 2.
- "[UNK] is [surfing] in the [sea] ." UNK counts as an error; nothing here describes the video. Paragraph score 1.
- "a dog catches a frisbee ." True, though it leaves the woman out: not an error. Paragraph score 5.
"""

RATING_PRESETS = {
    "vatex-eval": {
        "label": "VATEX-EVAL consistency (1-5)",
        "question": "How consistent is the caption with the content of the video?",
        "scale": [
            (1, "Completely inconsistent with the video."),
            (2, "Mostly inconsistent."),
            (3, "Partly consistent, partly not."),
            (4, "Mostly consistent."),
            (5, "Completely consistent with the video."),
        ],
        "instructions": (
            "## What you do\nWatch the video, then rate how consistent each caption is with what the video shows, "
            "from 1 (completely inconsistent) to 5 (completely consistent). Rate each caption on its own; the "
            "captions come in random order without the names of the systems that wrote them.\n"
        ),
    },
    "fifa": {
        "label": "FIFA faithfulness (1-5)",
        "question": "How faithful is the caption to the video?",
        "scale": [
            (1, "Completely hallucinated."),
            (2, "Mostly hallucinated."),
            (3, "Partly faithful."),
            (4, "Mostly faithful, minor hallucinations."),
            (5, "Fully faithful."),
        ],
        "instructions": (
            "## What you do\nWatch the video, then rate how faithful each caption is: does everything it says "
            "appear in the video? 1 means completely hallucinated, 5 fully faithful. Do not penalise what a "
            "caption leaves out. When a caption answers a prompt, the prompt is shown above it: judge the answer "
            "against the video, not against the prompt.\n"
        ),
    },
}
DEFAULT_RATING_PRESET = "vatex-eval"
