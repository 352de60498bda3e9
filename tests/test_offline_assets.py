"""ext.offline without its assets: an HTML build stops and says how to fetch them.

Tiny Sphinx projects in a temporary directory, built in-process with only ``ext.offline``; the
asset cache is either empty, half-written, or faked (so no test needs the network or npm).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]

from ext.assets import ASSETS, COMPLETE_MARKER, MATHJAX, MERMAID, asset_dir, missing

PAGE = """Title
=====

A formula :math:`x^2`.

.. mermaid::

   flowchart LR
     A --> B
"""


def project(tmp_path: Path, cache: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        f"extensions = ['ext.offline']\noffline_assets_dir = {str(cache)!r}\n", encoding="utf-8")
    (src / "index.rst").write_text(PAGE, encoding="utf-8")
    return src


def build(src: Path, builder: str = "html") -> Path:
    out = src.parent / "out"
    app = Sphinx(src, src, out, src.parent / "doctrees", builder,
                 status=None, warning=None, freshenv=True)
    app.build()
    return out


def fake_install(cache: Path) -> None:
    """What setup_assets.py leaves behind, with stand-in files."""
    for asset in ASSETS:
        folder = asset_dir(cache, asset)
        folder.mkdir(parents=True)
        (folder / asset.entry).write_text(f"/* {asset.spec} */\n", encoding="utf-8")
        (folder / COMPLETE_MARKER).write_text(asset.integrity + "\n", encoding="utf-8")


def test_html_build_without_assets_names_the_setup_script(tmp_path):
    src = project(tmp_path, tmp_path / "empty-cache")
    with pytest.raises(ExtensionError) as caught:
        build(src)
    message = str(caught.value)
    assert "scripts/setup_assets.py" in message
    assert MATHJAX.spec in message and MERMAID.spec in message
    assert str(tmp_path / "empty-cache") in message


def test_an_interrupted_or_outdated_install_counts_as_missing(tmp_path):
    cache = tmp_path / "cache"
    fake_install(cache)
    (asset_dir(cache, MERMAID) / COMPLETE_MARKER).unlink()  # interrupted before the marker
    (asset_dir(cache, MATHJAX) / COMPLETE_MARKER).write_text("sha512-other\n", encoding="utf-8")
    assert missing(cache) == [MATHJAX, MERMAID]
    with pytest.raises(ExtensionError, match=r"scripts/setup_assets\.py"):
        build(project(tmp_path, cache))


def test_builders_that_load_no_javascript_do_not_need_the_assets(tmp_path):
    out = build(project(tmp_path, tmp_path / "empty-cache"), builder="text")
    assert (out / "index.txt").is_file()


def test_with_assets_pages_load_them_from_static(tmp_path):
    cache = tmp_path / "cache"
    fake_install(cache)
    out = build(project(tmp_path, cache))
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" not in html and "https://" not in html.split("<body")[0]
    for asset in ASSETS:
        copies = list((out / "_static" / "offline").glob(f"{asset.name}-*/{asset.entry}"))
        assert len(copies) == 1, f"{asset.spec} not copied once into _static: {copies}"
        assert f'src="{copies[0].relative_to(out).as_posix()}?v=' in html
    assert '_static/offline/mermaid-init.js' in html
    assert 'type="module"' not in html  # sphinxcontrib-mermaid's ES-module loader is bypassed
