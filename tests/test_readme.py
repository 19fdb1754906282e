"""The README's commands are true (issue #9, item 5): it opens with the two commands of a fresh machine; every
`manage.py` example runs in the project's environment (`.venv/bin/python`), names an existing command and
passes that command's argument parser; the commands a new user looks for are documented."""

import re
import shlex

import pytest
from django.core.management import get_commands, load_command_class

from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def shell_blocks(text):
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def manage_lines():
    lines = []
    for block in shell_blocks(README):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if "manage.py" in line and not line.startswith(("DATABASE_URL=", "$")):
                lines.append(line)
    return lines


def test_the_readme_opens_with_the_two_commands():
    first = shell_blocks(README)[0].splitlines()
    assert first[0].startswith("./scripts/run ") and first[1].startswith("./scripts/test ")
    assert README.index("```sh") < README.index("## What it is")


def test_every_manage_py_example_uses_the_projects_environment():
    lines = manage_lines()
    assert len(lines) >= 20
    bare = [line for line in lines if not line.startswith(".venv/bin/python manage.py ")]
    assert not bare, bare
    # in the prose, a bare `python manage.py` only right after saying to activate the environment
    for match in re.finditer(r"`python manage\.py [^`]*`", README):
        assert "activate" in README[max(0, match.start() - 60) : match.start()], match.group(0)


@pytest.mark.parametrize("line", manage_lines())
def test_every_example_names_a_command_and_parses(line):
    arguments = shlex.split(line)[2:]
    name, options = arguments[0], arguments[1:]
    commands = get_commands()
    assert name in commands, f"no command {name!r}"
    parser = load_command_class(commands[name], name).create_parser("manage.py", name)
    parser.parse_args(options)  # a wrong option or value exits (and fails the test)


@pytest.mark.parametrize(
    "command", ["da_qc", "da_replication", "caption_pairs", "da_assign", "load_demo", "factuality_project"]
)
def test_the_commands_a_new_user_looks_for_are_documented(command):
    assert any(line.split()[2] == command for line in manage_lines()) or f"`{command}`" in README


def test_the_configuration_table_lists_the_public_address_and_log_level():
    assert "| `CAPTIONEVAL_BASE_URL` |" in README and "| `LOG_LEVEL` |" in README


def test_the_docs_stand_on_their_own():
    for path in sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]:
        text = path.read_text()
        assert "DESIGN.md" not in text and "../shared/DESIGN" not in text, path.name
