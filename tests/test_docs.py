"""The documentation builds without warnings, its generated pages are current, its links resolve."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_cli_reference_is_generated_from_the_parser():
    from smartboost._clidoc import parser_markdown

    assert (DOCS / "reference" / "cli.md").read_text() == parser_markdown(), \
        "docs/reference/cli.md is stale: python -m smartboost._clidoc > docs/reference/cli.md"


def _relative_links(path: Path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # not inside code blocks
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


@pytest.mark.parametrize("page", ["README.md", *sorted(str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md")
                                                        if "_build" not in p.parts)])
def test_relative_links_point_to_files(page):
    path = ROOT / page
    missing = [t for t in _relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{page} links to missing files: {missing}"


def test_sphinx_builds_the_docs_without_warnings(tmp_path):
    for module in ("sphinx", "myst_parser", "numpydoc"):
        pytest.importorskip(module)
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"sphinx failed:\n{result.stdout}\n{result.stderr}"
