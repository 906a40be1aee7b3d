"""docs/architecture.md stays true to the code: every module, package and test directory it names
exists, and the README links to it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
# a repository path in backticks: a .py module, a package or directory (trailing /), a YAML file
PATH = re.compile(r"`((?:advisors|app|connectors|migrations|policies|tests|bench|docs)/[\w./-]*)`")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATH.findall(text)))


def test_the_check_reads_paths_and_only_paths() -> None:
    text = "`advisors/benefit.py` and `app/store/` and `make test` and `TW700`"
    assert named_paths(text) == ["advisors/benefit.py", "app/store/"]


def test_every_path_the_architecture_page_names_exists() -> None:
    names = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(names) > 40  # the page names the modules of every layer and step
    missing = [n for n in names if not (ROOT / n).exists()]
    assert missing == []


def test_every_store_layer_the_page_lists_is_in_the_import_contract() -> None:
    """The page's app/ layers are the import-linter contract's (pyproject.toml)."""
    contract = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    page = DOC.read_text(encoding="utf-8")
    for module in ("review", "scripts", "evaluate", "jobs", "verify", "errors", "settings", "secrets", "timefmt",
                   "textfmt"):  # fmt: skip
        assert f"`app/{module}.py`" in page and re.search(rf"\b{module}\b", contract), module


def test_the_readme_links_the_architecture_page() -> None:
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
