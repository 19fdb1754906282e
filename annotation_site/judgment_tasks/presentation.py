"""What the annotation page shows of an item, built from the definition (plain values for a dumb template and
the page's script). No queries: the item row carries its fields and lists."""


def element_number(marker, index):
    return f"{marker}{index + 1}" if marker else str(index + 1)


def _elements(spec, texts):
    return [{"index": i, "number": element_number(spec["marker"], i), "text": text} for i, text in enumerate(texts)]


def present(definition, item):
    """``{"fields", "lists", "questions"}``: the fields with text, the lists shown on their own (a list shown in
    a question's rows is not repeated), and per question what its controls need (rows, options)."""
    specs = {entry["name"]: entry for entry in definition["lists"]}
    elements = {name: _elements(spec, item.lists.get(name, [])) for name, spec in specs.items()}
    in_rows = set()
    questions = []
    for question in definition["questions"]:
        entry = {key: question[key] for key in ("id", "type", "prompt", "help", "required")}
        if question["type"] == "likert":
            entry["options"] = [
                {"value": value, "label": label, "key": str(value)} for value, label in question["scale"]
            ]
        elif question["type"] == "choice":
            entry["options"] = [
                {"value": value, "label": label, "key": str(i + 1) if i < 9 else ""}
                for i, (value, label) in enumerate(question["options"])
            ]
        elif question["type"] == "count":
            entry.update(min=question["min"], max=question["max"])
        elif question["type"] == "text":
            entry.update(max_length=question["max_length"], lines=question["rows"])
        if question["type"] == "pairs":
            left, right = specs[question["left"]], specs[question["right"]]
            entry.update(
                left_label=left["label"],
                right_label=right["label"],
                choices=elements[question["left"]],
                rows=elements[question["right"]],
            )
            in_rows.add(question["right"])
        elif question.get("per"):
            rows = [dict(row) for row in elements[question["per"]]]
            if question.get("with"):
                for row, partner in zip(rows, elements[question["with"]]):
                    row["partner"] = partner
                in_rows.add(question["with"])
            entry.update(
                rows=rows,
                per_label=specs[question["per"]]["label"],
                with_label=specs[question["with"]]["label"] if question.get("with") else "",
            )
            in_rows.add(question["per"])
        questions.append(entry)
    fields = [
        {"name": spec["name"], "label": spec["label"], "text": item.fields[spec["name"]]}
        for spec in definition["fields"]
        if item.fields.get(spec["name"])
    ]
    lists = [
        {"name": name, "label": spec["label"], "elements": elements[name]}
        for name, spec in specs.items()
        if name not in in_rows and elements[name]
    ]
    return {"fields": fields, "lists": lists, "questions": questions}


def script_config(definition, presented):
    """What the page's script needs to know of the questions: per question its type and the number of rows
    (elements) or the size of the pairs grid; option values in order."""
    out = []
    for question, shown in zip(definition["questions"], presented["questions"]):
        entry = {
            "id": question["id"],
            "type": question["type"],
            "required": question["required"],
            "prompt": question["prompt"],
        }
        if "options" in shown:
            entry["options"] = [option["value"] for option in shown["options"]]
        if question["type"] == "pairs":
            entry["left"] = len(shown["choices"])
            entry["rows"] = len(shown["rows"])
        elif "rows" in shown:
            entry["rows"] = len(shown["rows"])
        if question["type"] == "count":
            entry.update(min=question["min"], max=question["max"])
        out.append(entry)
    return out
