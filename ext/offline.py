"""Serve MathJax and mermaid from the build's own ``_static``, so the site works from file://.

The pinned packages unpacked by ``scripts/setup_assets.py`` (see ``ext.assets``) are copied to
``_static/offline/<name>-<hash>/``, named by a hash of their content. ``mathjax_path`` is pointed
at the local MathJax. sphinxcontrib-mermaid's loader is disconnected: it imports mermaid's ES
module (from a CDN unless ``mermaid_use_local``), and browsers refuse module imports from
file://. Instead a page with a diagram loads mermaid's UMD build and ``mermaid-init.js``
(``ext/static-offline/``), which draws every ``pre.mermaid`` block once the page has loaded.
So sphinxcontrib-mermaid's browser-side settings (``mermaid_version``, ``mermaid_use_local``,
``mermaid_init_config``, fullscreen, zoom) have no effect; its directive and node are used as is.

An HTML build without the assets stops with an error naming the setup script.
"""

from __future__ import annotations

import shutil
from functools import lru_cache
from pathlib import Path

import sphinxcontrib.mermaid
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

from .assets import ASSETS, MATHJAX, MERMAID, Asset, SETUP_COMMAND, asset_dir, missing, tree_digest

STATIC_SUBDIR = "offline"  # under _static
OWN_FILES = Path(__file__).parent / "static-offline"  # mermaid-init.js, mermaid.css


def cache_dir(app: Sphinx) -> Path:
    return Path(app.confdir, app.config.offline_assets_dir)


def missing_message(cache: Path) -> str:
    absent = ", ".join(asset.spec for asset in missing(cache))
    return (f"offline assets missing: {absent} (looked in {cache}). "
            f"Run `{SETUP_COMMAND}` from the repository root first; it fetches them from npm.")


def check_assets(cache: Path) -> None:
    if missing(cache):
        raise ExtensionError(missing_message(cache))


@lru_cache(maxsize=None)
def static_folder(cache: Path, asset: Asset) -> str:
    """The asset's folder under ``_static``, named by a hash of its content."""
    return f"{STATIC_SUBDIR}/{asset.name}-{tree_digest(asset_dir(cache, asset))}"


def point_mathjax_at_local_copy(app: Sphinx, config: Config) -> None:
    cache = cache_dir(app)
    if not missing(cache):  # else builder-inited stops an HTML build; others need no MathJax
        config.mathjax_path = f"{static_folder(cache, MATHJAX)}/{MATHJAX.entry}"


def copy_assets(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    cache = cache_dir(app)
    check_assets(cache)
    static = Path(app.outdir, "_static")
    for asset in ASSETS:
        target = static / static_folder(cache, asset)
        if not target.is_dir():  # a content-named folder, once written, is up to date
            staging = target.with_name(target.name + ".tmp")
            shutil.rmtree(staging, ignore_errors=True)
            shutil.copytree(asset_dir(cache, asset), staging,
                            ignore=shutil.ignore_patterns(".complete"))
            staging.rename(target)
        for stale in target.parent.glob(f"{asset.name}-*"):  # copies of an earlier pin
            if stale != target and stale.is_dir():
                shutil.rmtree(stale)
    for own in OWN_FILES.iterdir():
        (static / STATIC_SUBDIR).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(own, static / STATIC_SUBDIR / own.name)


def add_mermaid(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """On a page with a diagram, load mermaid's UMD build and the script that runs it."""
    if app.builder.format != "html" or doctree is None:
        return
    if doctree.next_node(sphinxcontrib.mermaid.mermaid) is None:
        return
    folder = static_folder(cache_dir(app), MERMAID)
    app.builder.add_js_file(f"{folder}/{MERMAID.entry}", defer="defer")
    app.builder.add_js_file(f"{STATIC_SUBDIR}/mermaid-init.js", defer="defer")
    app.builder.add_css_file(f"{STATIC_SUBDIR}/mermaid.css")


def bypass_mermaid_loader(app: Sphinx) -> None:
    """Disconnect sphinxcontrib-mermaid's ``install_js`` (it would add an ES-module import)."""
    listeners = [listener for listener in app.events.listeners["html-page-context"]
                 if listener.handler is sphinxcontrib.mermaid.install_js]
    if not listeners:
        raise ExtensionError("ext.offline: sphinxcontrib-mermaid's install_js hook was not found; "
                             "its loader changed, so check that no page loads mermaid remotely")
    for listener in listeners:
        app.disconnect(listener.id)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinxcontrib.mermaid")
    app.add_config_value("offline_assets_dir", ".cache/assets", "html", types=[str],
                         description="where scripts/setup_assets.py unpacked the assets "
                                     "(relative to the configuration directory)")
    bypass_mermaid_loader(app)
    app.connect("config-inited", point_mathjax_at_local_copy)
    app.connect("builder-inited", copy_assets)
    app.connect("html-page-context", add_mermaid)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
