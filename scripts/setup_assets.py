"""Fetch the browser assets the offline site serves: MathJax and mermaid, at pinned versions.

Run from the repository root (once per checkout; the build fails and names this script when
the assets are missing):

    .venv/bin/python scripts/setup_assets.py

For each package pinned in ``ext/assets.py`` it runs ``npm pack <name>@<version>`` (the npm
registry is the only network it needs), checks the tarball's sha512 against the pinned
integrity, and unpacks only the files a browser loads into ``.cache/assets/<name>-<version>/``
(gitignored). A package already unpacked from the pinned tarball is skipped, so a second run
takes well under a second. ``--force`` unpacks again.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from ext.assets import ASSETS, COMPLETE_MARKER, LICENSE, Asset, asset_dir, is_installed

ROOT = Path(__file__).resolve().parent.parent

CACHE = ROOT / ".cache" / "assets"


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def integrity_of(path: Path) -> str:
    digest = hashlib.sha512(path.read_bytes()).digest()
    return "sha512-" + base64.b64encode(digest).decode("ascii")


def npm_pack(asset: Asset, into: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("setup_assets: npm not found (Debian: apt-get install -y npm)")
    result = subprocess.run(
        [npm, "pack", asset.spec, "--json", "--ignore-scripts", "--pack-destination", str(into)],
        capture_output=True, text=True, cwd=into,
    )
    if result.returncode != 0:
        sys.exit(f"setup_assets: npm pack {asset.spec} failed:\n{result.stderr.strip()}")
    filename = json.loads(result.stdout)[0]["filename"]
    return into / filename


def wanted(member: str, asset: Asset) -> str | None:
    """The path under the asset folder for a tarball member, or None to leave it out."""
    if not member.startswith("package/"):
        return None
    inside = member[len("package/"):]
    if inside == LICENSE:
        return LICENSE
    prefix = asset.root + "/"
    if not inside.startswith(prefix):
        return None
    relative = inside[len(prefix):]
    if any(relative == m or relative.startswith(m + "/") for m in asset.members):
        return relative
    return None


def unpack(tarball: Path, asset: Asset, into: Path) -> int:
    count = 0
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            relative = wanted(member.name, asset)
            if relative is None or not member.isfile():
                continue
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.extractfile(member) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
            count += 1
    missing = [m for m in asset.members if not (into / m).exists()]
    if missing:
        sys.exit(f"setup_assets: {asset.spec} has no {', '.join(missing)} under {asset.root}/")
    return count


def install(asset: Asset, cache: Path, force: bool = False) -> str:
    target = asset_dir(cache, asset)
    if not force and is_installed(cache, asset):
        return f"{asset.spec}: present in {shown(target)}"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        tarball = npm_pack(asset, Path(tmp))
        actual = integrity_of(tarball)
        if actual != asset.integrity:
            sys.exit(f"setup_assets: {tarball.name} integrity mismatch\n"
                     f"  pinned:  {asset.integrity}\n  fetched: {actual}")
        staging = Path(tmp) / "unpacked"
        count = unpack(tarball, asset, staging)
        (staging / COMPLETE_MARKER).write_text(asset.integrity + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return f"{asset.spec}: {count} files verified and unpacked into {shown(target)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch and unpack even if present")
    args = parser.parse_args(argv)
    for asset in ASSETS:
        print(install(asset, CACHE, force=args.force))
    return 0


if __name__ == "__main__":
    sys.exit(main())
