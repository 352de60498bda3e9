"""Publishing: the workflow, the one table of the site's addresses, the licences, and the tree
the forge serves.

The workflow (``.github/workflows/publish.yml``) cannot run here; what can be checked is
checked: it parses, runs on a push to main, runs the README's build command and ``make
publish``, sets every setting of ``ext/site_settings.py`` from the forge, uploads the folder
``scripts/assemble_site.py`` assembles, and deploys it with the pages permissions. The check of
the publishable tree (``assemble_site.tree_problems``) is shown to find what it must on a small
broken tree, then run on the real one (``_build/site`` after ``make publish``; ``make test``
makes it): both languages, both PDFs, every chapter's notebook, no absolute local path, every
internal link resolving.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from ext import site_settings
from ext.chapter_header import FOLDER as NOTEBOOKS
from ext.chapters import book_order, read_chapter
from ext.locale_table import LOCALES, SOURCE

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"


def _assemble_site():
    spec = importlib.util.spec_from_file_location("assemble_site_for_publish",
                                                  ROOT / "scripts" / "assemble_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


assemble = _assemble_site()


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def uses(step: dict, action: str) -> bool:
    return step.get("uses", "").split("@")[0] == action


def readme_build_command() -> str:
    """The README's build command: the line of its first shell block that builds the site."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.DOTALL).group(1)
    line = next(line for line in block.splitlines() if "_build/site" in line)
    return line.split("#")[0].strip()


# --- the workflow --------------------------------------------------------------------------------

def test_the_workflow_runs_on_a_push_to_main_with_the_readmes_commands():
    flow = workflow()
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"]
    build = flow["jobs"]["build"]
    commands = [step["run"].strip() for step in steps(build) if "run" in step]
    assert readme_build_command() == "make html"
    assert readme_build_command() in commands, commands
    assert "make publish" in commands, commands
    assert commands.index("make html") < commands.index("make publish")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^publish:(.*)\n\t(.*)$", makefile, re.MULTILINE)
    assert recipe and {"html", "pdf"} <= set(recipe.group(1).split()), "make publish: html pdf"
    assert recipe.group(2).split()[1:] == ["scripts/assemble_site.py", "--publish"]
    assert re.search(r"^test:.*\bpublish\b", makefile, re.MULTILINE), "make test checks the tree"
    assert build.get("timeout-minutes", 360) <= 60


def test_the_workflow_uploads_the_assembled_site_and_deploys_it():
    flow = workflow()
    assert {"pages": "write", "id-token": "write"}.items() <= flow["permissions"].items()
    build = flow["jobs"]["build"]
    upload = [step for step in steps(build) if uses(step, "actions/upload-pages-artifact")]
    assert len(upload) == 1
    assert ROOT / upload[0]["with"]["path"] == assemble.SITE
    assert steps(build).index(upload[0]) == len(steps(build)) - 1, "upload after the build"
    deploy = [job for job in flow["jobs"].values()
              if any(uses(step, "actions/deploy-pages") for step in steps(job))]
    assert len(deploy) == 1 and deploy[0]["needs"] == "build"
    assert deploy[0]["environment"]["name"] == "github-pages"


def test_the_workflow_sets_every_site_setting_from_the_forge():
    text = WORKFLOW.read_text(encoding="utf-8")
    for setting in site_settings.SETTINGS:
        assert re.search(rf"\b{setting.variable}=\$\{{\{{", text), (
            f"the workflow does not set ${setting.variable} ({setting.name})")
    assert "steps.pages.outputs.base_url" in text  # the address the forge serves the site from


# --- the settings table and the licences ---------------------------------------------------------

def test_every_site_setting_has_a_default_a_variable_and_a_description(monkeypatch):
    names = [setting.name for setting in site_settings.SETTINGS]
    assert names == ["base_url", "repository_url", "branch"]
    for setting in site_settings.SETTINGS:
        assert setting.default and setting.variable.startswith("AGENTRL_SITE_")
        assert len(setting.description.split()) >= 8, setting.name
        monkeypatch.delenv(setting.variable, raising=False)
    assert site_settings.site_url(SOURCE) == f"{site_settings.base_url()}{SOURCE.folder}/"
    monkeypatch.setenv("AGENTRL_SITE_BASE_URL", "https://example.org/books/rl")
    assert site_settings.site_url(SOURCE) == f"https://example.org/books/rl/{SOURCE.folder}/"
    assert site_settings.site_path(SOURCE) == f"/books/rl/{SOURCE.folder}/"


def test_the_licences_are_stated():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"]["text"] == site_settings.CODE_LICENCE
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Licence", 1)[1].split("\n## ", 1)[0]
    assert site_settings.TEXT_LICENCE in section and site_settings.TEXT_LICENCE_URL in section
    assert site_settings.CODE_LICENCE in section and "Why" in section
    for locale in LOCALES:
        assert {"{text}", "{code}"} <= set(re.findall(r"\{\w+\}", locale.licence)), locale.folder


# --- the publishable tree -----------------------------------------------------------------------

def test_the_tree_check_names_what_keeps_a_tree_from_being_published(tmp_path):
    site = tmp_path / "site"
    for locale in LOCALES:
        folder = site / locale.folder
        folder.mkdir(parents=True)
        (folder / "index.html").write_text(
            '<a href="missing.html">x</a> <a href="#nowhere">y</a> <a href="https://x.org/">z</a>'
            f' <a href="index.html#top" id="top">t</a> <img src="{ROOT}/x.png">',
            encoding="utf-8")
    (site / "llms.txt").write_text("see file:///home/someone/book\n", encoding="utf-8")
    (site / "404.html").write_text(
        f'<a href="{site_settings.site_path(SOURCE)}index.html">home</a>'
        '<a href="/elsewhere/x.html">out</a>', encoding="utf-8")
    problems = assemble.tree_problems(site)
    text = "\n".join(problems)
    for locale in LOCALES:
        assert f"{locale.folder}/index.html: missing.html leads nowhere" in problems
        assert f"{locale.folder}/index.html: #nowhere: no id 'nowhere'" in text
        assert f"{locale.folder}/{locale.pdf_name}: missing" in problems
        assert f"{locale.folder}/sitemap.xml: missing" in problems
        assert f"{locale.folder}/{NOTEBOOKS}/" in text
        assert f"{locale.folder}/index.html: an absolute local path" in text
    assert "llms.txt: an absolute local path: 'file:///'" in problems
    assert "404.html: /elsewhere/x.html leads nowhere" in problems
    assert not [p for p in problems if "x.org" in p or "#top" in p or p.startswith("404.html: /")
                and "elsewhere" not in p], problems


@pytest.fixture(scope="module")
def published() -> Path:
    site = assemble.SITE
    if not all((site / locale.folder / locale.pdf_name).is_file() for locale in LOCALES):
        pytest.fail(f"no publishable tree at {site.relative_to(ROOT)}: run `make publish` "
                    "(make html, make pdf, then scripts/assemble_site.py --publish)",
                    pytrace=False)
    return site


def test_the_published_tree_is_complete_and_every_link_resolves(published):
    problems = assemble.tree_problems(published)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("locale", LOCALES, ids=lambda locale: locale.folder)
def test_the_published_tree_has_the_language_its_pdf_and_its_notebooks(published, locale):
    folder = published / locale.folder
    assert (folder / "index.html").is_file()
    pdf = folder / locale.pdf_name
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert pdf.read_bytes() == (assemble.PDF_DIR / locale.pdf_name).read_bytes(), "a stale copy"
    chapters = [path for path in book_order(ROOT / "book" / locale.folder)
                if read_chapter(path).cells]
    assert len(chapters) > 10
    for chapter in chapters:
        notebook = folder / NOTEBOOKS / f"{chapter.stem}.ipynb"
        assert notebook.is_file(), notebook
        assert '"cell_type": "code"' in notebook.read_text(encoding="utf-8")
    if locale == SOURCE:
        assert (published / "404.html").read_bytes() == (folder / "404.html").read_bytes()
