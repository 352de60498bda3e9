"""The browser assets the site serves itself: which npm packages, which files, where they live.

MathJax and mermaid come from their official npm packages at pinned versions, checked against
the registry's sha512 integrity (recorded here), and unpacked into
``.cache/assets/<name>-<version>/`` by ``scripts/setup_assets.py``; ``ext.offline`` copies them
into each build's ``_static``. The press's own stylesheets are copied there by
:func:`copy_style`. Nothing here imports Sphinx.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

SETUP_COMMAND = ".venv/bin/python scripts/setup_assets.py"
COMPLETE_MARKER = ".complete"  # written last; holds the tarball's integrity string


@dataclass(frozen=True)
class Asset:
    name: str  # npm package name
    version: str
    integrity: str  # the registry's dist.integrity for name@version
    root: str  # folder of the package copied from (inside the tarball's ``package/``)
    members: tuple[str, ...]  # files or folders under ``root`` that the browser may load
    entry: str  # the file a page loads, relative to ``root``

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


# MathJax 3's single-file component finds its fonts and on-demand TeX extensions relative to its
# own URL, which works from file://. (The fonts of MathJax 4 are separate packages loaded as
# further components; not needed here.)
MATHJAX = Asset(
    name="mathjax",
    version="3.2.2",
    integrity="sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
    root="es5",
    members=(
        "tex-chtml.js",
        "output/chtml/fonts/woff-v2",
        "input/tex/extensions",  # \require and autoloaded macros (\cancel, \boldsymbol, ...)
        "ui",  # the right-click menu
        "a11y",  # what the menu loads for its accessibility options
    ),
    entry="tex-chtml.js",
)

# The UMD build: the ES-module build cannot be imported from file:// (opaque origin).
MERMAID = Asset(
    name="mermaid",
    version="11.17.2",
    integrity="sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg==",
    root="dist",
    members=("mermaid.min.js",),
    entry="mermaid.min.js",
)

ASSETS = (MATHJAX, MERMAID)
LICENSE = "LICENSE"  # each package's licence file is kept beside its files


def asset_dir(cache: Path, asset: Asset) -> Path:
    return Path(cache) / asset.dirname


def is_installed(cache: Path, asset: Asset) -> bool:
    """True when setup finished unpacking exactly this pinned tarball."""
    marker = asset_dir(cache, asset) / COMPLETE_MARKER
    return marker.is_file() and marker.read_text(encoding="utf-8").strip() == asset.integrity


def missing(cache: Path) -> list[Asset]:
    return [asset for asset in ASSETS if not is_installed(cache, asset)]


def tree_digest(folder: Path) -> str:
    """A short hash of every file's relative path and bytes: the name of the copy in ``_static``."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        if path.name == COMPLETE_MARKER:
            continue
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def copy_style(app, source: Path) -> None:
    """Copy one of the press's stylesheets into an HTML build's ``_static``, where its template
    links it: a ``builder-inited`` handler, given its file with ``functools.partial``."""
    if app.builder.format == "html":
        static = Path(app.outdir, "_static")
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, static / source.name)
