"""A print split across output flushes is compared, and shown, exactly as it was written.

ipykernel flushes stdout on a timer, so one ``print`` can arrive as two stream chunks.
myst-nb's own merging re-adds a newline at every join; the press must not.
"""

from __future__ import annotations

from press_helpers import chapter, copy_book, output_blocks, sphinx_build

SPLIT_CELL = ("\n```{code-cell} ipython3\nimport time\nprint('vector:', end='')\n"
              "time.sleep(0.6)\nprint(' True')\n```\n\nOutput:\n\n```text\nvector: True\n```\n")


def test_split_print_matches_its_block_and_renders_once(tmp_path):
    root = copy_book(tmp_path)
    page = chapter(root, "en/01-basics.md")
    text = page.read_text(encoding="utf-8")
    page.write_text(text.rstrip("\n") + "\n" + SPLIT_CELL, encoding="utf-8")
    build = sphinx_build(root, "en")
    assert build.returncode == 0, build.stderr[-3000:]
    assert build.warnings == []
    assert output_blocks(build.html("01-basics"))[-1] == "vector: True"
