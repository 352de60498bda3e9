"""The hosted site: where it is published and where its sources live, in one table.

Every address the site prints that points outside the built pages comes from :data:`SETTINGS`:
the canonical links, the sitemaps, ``llms.txt``, the 404 page's prefix and the link previews
(``ext.hosting``), the "edit this page" and "report a problem" links, the licence link of the
footer and the site's landing page (``scripts/assemble_site.py``). Each setting has a default
for a local build and an environment variable that overrides it; the publishing workflow
(``.github/workflows/publish.yml``) sets the variables from the forge, so the published site
names the address it is served from. Nothing here imports Sphinx.

    python -m ext.site_settings          # every setting: name, value, variable, description
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

from .locale_table import Locale


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    variable: str  # the environment variable that overrides the default
    description: str

    @property
    def value(self) -> str:
        return os.environ.get(self.variable) or self.default


SETTINGS: tuple[Setting, ...] = (
    Setting("base_url", "https://agentrl-book.github.io/agentrl/", "AGENTRL_SITE_BASE_URL",
            "The address the site is served from (the folder of its landing page, ending in "
            "'/'); each language lives under it in its own folder (<base_url>en/, ...). "
            "Canonical links, sitemaps, llms.txt, link previews and the 404 page's prefix are "
            "built from it."),
    Setting("repository_url", "https://github.com/agentrl-book/agentrl",
            "AGENTRL_SITE_REPOSITORY",
            "The forge repository that holds the book's sources: the target of 'edit this "
            "page' (<repository_url>/edit/<branch>/book/<lang>/<page>.md), 'report a problem' "
            "(<repository_url>/issues/new) and the licence link."),
    Setting("branch", "main", "AGENTRL_SITE_BRANCH",
            "The branch the site is published from, which 'edit this page' opens."),
)


# The book's licences (README.md, "Licence", says why): the code is the package's licence
# (pyproject.toml, LICENSE); the text and figures are under Creative Commons, as d2l's are.
CODE_LICENCE = "Apache-2.0"
TEXT_LICENCE = "CC BY-SA 4.0"
TEXT_LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"


def setting(name: str) -> Setting:
    for entry in SETTINGS:
        if entry.name == name:
            return entry
    raise KeyError(f"no site setting {name!r}; the table has {[s.name for s in SETTINGS]}")


def base_url() -> str:
    url = setting("base_url").value
    return url if url.endswith("/") else url + "/"


def repository_url() -> str:
    return setting("repository_url").value.rstrip("/")


def branch() -> str:
    return setting("branch").value


def site_url(locale: Locale) -> str:
    """Where a language's pages are served from: ``<base_url><folder>/``."""
    return f"{base_url()}{locale.folder}/"


def site_path(locale: Locale | None = None) -> str:
    """The path part of the site's (or a language's) address, e.g. ``/agentrl/en/``: the
    prefix of the 404 page's links, which must work at any depth of the site."""
    return urlsplit(site_url(locale) if locale else base_url()).path


def source_path(locale: Locale) -> str:
    """The folder of a language's chapters in the repository."""
    return f"book/{locale.folder}"


def licence_url() -> str:
    return f"{repository_url()}/blob/{branch()}/LICENSE"


def main(argv: list[str]) -> int:
    if argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for entry in SETTINGS:
        print(f"{entry.name} = {entry.value}   (${entry.variable})\n    {entry.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
