"""The record contract: every lab record loads through the book's reader, has a reader, and is
listed in book/labs/records.toml with the command that makes it; the reader refuses what it
cannot read, by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import agentrl as arl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import labs_index  # noqa: E402
import records_manifest  # noqa: E402

RESULTS = ROOT / "book" / "labs" / "results"
VIEWS = {"warm_start": arl.WarmStartRecord, "run": arl.RunRecord, "fresh": arl.FreshRecord}


def test_every_record_loads_as_the_view_of_its_kind_and_its_links_exist():
    stems = sorted(p.stem for p in RESULTS.glob("*.json"))
    assert stems, "no records found"
    for stem in stems:
        record = arl.load_record(stem, RESULTS)
        assert isinstance(record, VIEWS.get(record.kind, arl.Record)), stem
        assert record.recipe and record.results, stem
        for linked in records_manifest.links({"recipe": record.recipe}):
            assert (RESULTS / f"{linked}.json").exists(), f"{stem} names {linked}, which is absent"


def test_a_fresh_record_pairs_its_runs_in_order():
    fresh = arl.load_record("gym_v2_rl_fresh_hg_rloo_lr3e-4", RESULTS)
    runs = fresh.linked("runs")
    assert [run.stem for run in runs] == fresh.runs
    assert [run.seed for run in runs] == [0, 1, 2]
    for split in ("rl_groups", "heldout"):
        tasks = len(fresh.task_ids(split))
        assert len(fresh.control(split)["t1"]["per_task"]) == tasks
        assert all(len(t["t1"]["per_task"]) == tasks for t in fresh.trained(split))


def test_the_manifest_is_current_and_every_record_has_a_reader():
    items = records_manifest.entries()
    assert records_manifest.problems(items) == []
    assert records_manifest.MANIFEST.read_text(encoding="utf-8") == \
        records_manifest.toml_text(items), "run python scripts/records_manifest.py"


def test_the_labs_index_is_current_and_files_every_record_once():
    """book/labs/README.md is labs_index's rendering of the manifest, and its experiments name
    every record of the manifest exactly once."""
    manifest = labs_index.load_manifest()
    assert labs_index.problems(manifest) == []
    assert labs_index.INDEX.read_text(encoding="utf-8") == labs_index.render(manifest), \
        "run python scripts/records_manifest.py (it rewrites the index too)"


def test_the_labs_index_names_strays_doubles_and_unknown_records():
    manifest = {"a": {"command": "run a", "read_by": ["tests/x.py", "record b"]},
                "b": {"command": "run b", "read_by": []}, "c": {"command": "run c", "read_by": []}}
    index = [labs_index.Experiment("One", "Q?", "F.", ["a", "b"]),
             labs_index.Experiment("Two", "Q?", "F.", ["b", "zzz"])]
    assert labs_index.problems(manifest, index) == [
        "'b' is in 'One' and in 'Two'", "'Two' names 'zzz', which records.toml does not list",
        "'c' belongs to no experiment"]
    text = labs_index.render(manifest, index[:1])
    assert "## 1. One" in text and "**Read by.** `tests/x.py`\n" in text
    assert "# a\nrun a\n# b\nrun b\n" in text


def write(folder: Path, stem: str, **fields) -> None:
    record = {"schema": arl.RECORD_SCHEMA, "lab": "book/labs/x.py", "kind": "run",
              "recipe": {"seed": 0}, "machine": {}, "results": {"log": []}}
    record.update(fields)
    (folder / f"{stem}.json").write_text(json.dumps(record))


def test_the_reader_names_a_missing_record(tmp_path):
    with pytest.raises(FileNotFoundError, match="no lab record 'absent'"):
        arl.load_record("absent", tmp_path)


def test_the_reader_refuses_another_schema_and_an_unknown_kind(tmp_path):
    write(tmp_path, "old", schema=0)
    write(tmp_path, "odd", kind="diary")
    with pytest.raises(ValueError, match="'old' has schema 0"):
        arl.load_record("old", tmp_path)
    with pytest.raises(ValueError, match="'odd' has kind 'diary'"):
        arl.load_record("odd", tmp_path)


def test_a_checkpoint_that_is_not_there_is_named(tmp_path):
    write(tmp_path, "run")
    record = arl.load_record("run", tmp_path)
    assert record.seed == 0 and record.log == []
    with pytest.raises(FileNotFoundError, match="'run' has no checkpoint run.pt"):
        record.checkpoint


def test_the_scan_finds_literal_readers_and_flags_unknown_names(tmp_path):
    chapter = tmp_path / "book" / "en" / "07-x.md"
    chapter.parent.mkdir(parents=True)
    chapter.write_text("# 7\n\n## 7.2 Two\n\n```python\nr = arl.load_record('a')\n"
                       "s = arl.load_record('zzz')\n```\n")
    readers = records_manifest.direct_readers({"a", "b"}, [chapter], tmp_path)
    assert readers == {"a": {"book/en/07-x.md 7.2"}, "b": set()}
    assert records_manifest.unknown_names({"a"}, [chapter], tmp_path) == [
        "book/en/07-x.md:7: no record 'zzz'"]


def test_a_checkpoint_git_ignores_is_not_shipped(tmp_path):
    """The manifest says which checkpoints a clone has, so a local-only one must not count."""
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("local_*.pt\n")
    (tmp_path / "local_run.pt").write_bytes(b"")
    (tmp_path / "kept_run.pt").write_bytes(b"")
    assert records_manifest.shipped_checkpoints(tmp_path) == {"kept_run"}
    # and only a shipped checkpoint without its record is a problem
    assert records_manifest.problems([], tmp_path.parent, tmp_path) == [
        f"{tmp_path.name}/kept_run.pt: a checkpoint with no record"]
