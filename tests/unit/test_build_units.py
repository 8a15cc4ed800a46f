"""Builds without building: what patch's output says, the default options, the cache key, the
labels, what a source was built with (the real builds: tests/integration/test_builds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.campaign import parse
from pglab.campaign.spec import BuildSpec, ServerSpec
from pglab.errors import BuildError
from pglab.lab import Lab
from pglab.postgres import build
from pglab.postgres.sources import Available

FAILED = """patching file src/backend/utils/misc/guc.c
Hunk #1 succeeded at 3909 (offset 2 lines).
Hunk #2 FAILED at 4120.
1 out of 2 hunks FAILED -- saving rejects to file src/backend/utils/misc/guc.c.rej
"""


def test_what_patch_said_in_one_line() -> None:
    assert build.patch_problem(FAILED) == (
        "hunk #2 of src/backend/utils/misc/guc.c failed (at line 4120)"
    )
    assert "already has this change" in build.patch_problem(
        "patching file a.c\nReversed (or previously applied) patch detected!  Skipping patch.\n"
    )
    assert "not a patch" in build.patch_problem(
        "patch: **** Only garbage was found in the patch input."
    )
    assert "not in the source" in build.patch_problem("can't find file to patch at input line 3\n")


def test_default_options_follow_the_libraries_found() -> None:
    every = ["lz4", "zstd", "icu", "openssl", "readline", "zlib"]
    assert build.default_options(False, every) == [
        "CFLAGS=-O2", "--with-lz4", "--with-zstd", "--with-icu", "--with-openssl"
    ]  # fmt: skip
    # missing libraries are turned off, not left for configure to stop on
    assert build.default_options(False, []) == [
        "CFLAGS=-O2",
        "--without-readline",
        "--without-zlib",
    ]
    meson = build.default_options(True, ["zstd"])
    assert "-Dzstd=enabled" in meson and "-Dlz4=disabled" in meson and "-Dssl=none" in meson
    assert "-Dcassert=false" in meson and "-Doptimization=2" in meson


def test_the_key_is_the_content_options_and_patches_in_order() -> None:
    p1 = {"name": "a.patch", "sha256": "1" * 64}
    p2 = {"name": "b.patch", "sha256": "2" * 64}
    key = build.build_key("s" * 64, (), [p1, p2], ["lz4"])
    assert key == build.build_key("s" * 64, (), [p1, p2], ["lz4"]) and len(key) == 16
    others = [
        build.build_key("t" * 64, (), [p1, p2], ["lz4"]),  # another source
        build.build_key("s" * 64, ("--enable-debug",), [p1, p2], ["lz4"]),
        build.build_key("s" * 64, (), [p2, p1], ["lz4"]),  # the order of patches counts
        build.build_key("s" * 64, (), [p1, {**p2, "sha256": "3" * 64}], ["lz4"]),  # an edit
        build.build_key("s" * 64, (), [p1, p2], ["lz4", "zstd"]),  # a library installed
    ]
    assert key not in others and len(set(others)) == len(others)


def test_a_tree_is_hashed_by_its_files_not_its_git(tmp_path: Path) -> None:
    tree = tmp_path / "pg"
    (tree / ".git").mkdir(parents=True)
    (tree / "configure").write_text("#!/bin/sh\n")
    first = build.source_hash(tree)
    (tree / ".git" / "HEAD").write_text("ref: x\n")
    assert build.source_hash(tree) == first
    (tree / "configure").write_text("#!/bin/sh\nexit 0\n")
    assert build.source_hash(tree) != first


def test_labels_and_what_is_stored_of_a_build_definition(tmp_path: Path) -> None:
    doc = {
        "server": {"build": {"source": "pg.tar.bz2", "patches": ["x.patch"], "options": "-g"}},
        "variants": {"base": {}, "v16": {"server": {"version": 16}},
                     "own": {"server": {"pgbench": "server"}}},
    }  # fmt: skip
    c = parse.parse(doc, default_name="t", base_dir=tmp_path)
    base, v16, own = (v.server for v in c.variants)
    assert base.build == BuildSpec(
        str(tmp_path / "pg.tar.bz2"), ("-g",), (str(tmp_path / "x.patch"),)
    )
    assert base.source_label.startswith("build:pg.tar.bz2+1-patch@")
    assert v16.source == "version" and v16.version == "16" and v16.build is None
    assert v16.source_label == "version:16"
    assert own.build == base.build and own.binaries_key == f"{base.source_label} pgbench=server"
    # the keys added for builds are stored only when used: older points keep their keys
    assert set(ServerSpec().identity()) == {"source", "bindir", "settings"}
    assert "build" in base.identity() and "pgbench" in own.identity()


def test_what_a_source_was_built_with() -> None:
    def available(version: str, *options: str) -> Available:
        return Available("x", version, Path("/x"), ServerSpec(), options)

    assert available("18.6", "--without-readline", "--without-icu").features == ()
    assert available("15.18", "--with-lz4", "--with-zstd", "--with-openssl").features == (
        "lz4", "zstd", "openssl"
    )  # fmt: skip
    assert available("17.2", "--with-ssl=openssl").features == ("icu", "openssl")  # ICU: on
    assert available("17.2", "-Dlz4=enabled", "-Dicu=disabled").features == ("lz4",)


def test_options_may_not_place_the_install(tmp_path: Path) -> None:
    tarball = tmp_path / "postgresql-17.2.tar.bz2"
    tarball.write_bytes(b"")
    spec = BuildSpec(str(tarball), options=("--prefix=/usr/local/pgsql",))
    with pytest.raises(BuildError) as err:
        build.ensure(spec, Lab(home=tmp_path, run_as=None))
    assert "may not say where it is installed (--prefix=/usr/local/pgsql)" in err.value.message


def test_a_build_cache_that_cannot_be_made_is_an_error(tmp_path: Path, monkeypatch) -> None:
    tarball = tmp_path / "postgresql-17.2.tar.bz2"
    tarball.write_bytes(b"not really")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PGLAB_BUILDS", str(tmp_path / "file" / "builds"))
    with pytest.raises(BuildError) as err:
        build.ensure(BuildSpec(str(tarball)), Lab(home=tmp_path, run_as=None))
    assert f"cannot make the build cache {tmp_path / 'file' / 'builds'}" in err.value.message
    assert err.value.hint and "PGLAB_BUILDS" in err.value.hint


def test_a_fingerprint_keeps_a_build_s_facts_in_the_stored_order() -> None:
    """``facts_of`` writes the keys stored fingerprints have always had, in their order; git
    only for a build of a commit; a key build.json lacks is None (as ``dict.get`` gave)."""
    patch = build.Patch(name="p.patch", path="/x/p.patch", sha256="ab" * 32)
    info = build.BuildInfo(
        key="k1", recipe=1, source="/src/pg.tar.bz2", source_sha256="cd" * 32, options=["-x"],
        patches=[patch], libraries=["zstd"], compiler="gcc 12", system="configure",
        effective_options=["CFLAGS=-O2", "-x"], ccache=False, version="15.8", built_at=1.0,
        build_seconds=80.5,
    )  # fmt: skip
    facts = build.facts_of(info)
    assert list(facts) == ["version", "source", "source_sha256", "options", "effective_options",
                           "patches", "compiler", "system", "key", "build_seconds"]  # fmt: skip
    assert facts["patches"] == [patch] and facts["build_seconds"] == 80.5
    git = build.GitSource(clone="/src/pg", ref="master", commit="f" * 40, subject="a commit")
    with_git = build.facts_of(build.BuildInfo(**info, git=git))
    assert list(with_git)[-1] == "git" and with_git["git"] == git
    older = build.facts_of(build.BuildInfo(key="k0", source="/src/old"))
    assert older["version"] is None and older["key"] == "k0" and "git" not in older
