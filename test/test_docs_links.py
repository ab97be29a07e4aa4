"""Every link between the project's pages resolves: a Markdown link or image in README.md, bench/README.md and docs/
names an existing file and, for a page, one of its headings; a ``docs/<page>.md[#anchor]`` named in the source, the
tests, the benchmarks, the tools or the config files does too. A page split or a heading renamed fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_REF = re.compile(r"\bdocs/(\w+\.md)(?:#([\w-]+))?")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces → hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (outside fenced code)."""
    found, code = set(), False
    for line in page.read_text().splitlines():
        code ^= line.startswith("```")
        heading = re.match(r"#{1,6} (.*)", line)
        if heading and not code:
            found.add(slug(heading.group(1)))
    return found


def broken(source: Path, target: Path, fragment: str) -> str | None:
    """Why ``target#fragment`` named in ``source`` does not resolve, or None."""
    where = source.relative_to(ROOT)
    if not target.exists():
        return f"{where}: no file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
    if fragment and target.suffix == ".md" and fragment not in anchors(target):
        return f"{where}: no heading #{fragment} in {target.relative_to(ROOT)}"
    return None


def test_slug_is_github_s():
    assert slug("The sim node with backend mujoco") == "the-sim-node-with-backend-mujoco"
    assert slug("Robot models: ROBOTIS OP3 and MuJoCo Menagerie robots") == (
        "robot-models-robotis-op3-and-mujoco-menagerie-robots"
    )
    assert slug("Bring-ups sim_humanoid and sim_arm") == "bring-ups-sim_humanoid-and-sim_arm"


def test_links_between_pages_resolve():
    errors = []
    for page in PAGES:
        for link in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", link):  # https:, mailto:
                continue
            path, _, fragment = link.partition("#")
            errors.append(broken(page, (page.parent / path) if path else page, fragment))
    assert [e for e in errors if e] == []
    assert len(errors) > 50  # the pages were read


def test_docs_pages_named_in_code_and_config_exist():
    files = [*ROOT.glob("src/**/*.py"), *ROOT.glob("test/*.py"), *ROOT.glob("bench/*.py"), *ROOT.glob("tools/*.py")]
    files += [*ROOT.glob("config/*.yaml"), ROOT / "setup.py"]
    errors, seen = [], 0
    for f in files:
        for name, fragment in DOCS_REF.findall(f.read_text()):
            seen += 1
            errors.append(broken(f, ROOT / "docs" / name, fragment))
    assert [e for e in errors if e] == []
    assert seen > 5
