"""PostgreSQL built by the lab from a source tree or a release tarball, kept in a cache.

A build is keyed by what makes it: the source's content (a tarball's bytes, or every file of a
tree but ``.git``), the options (the lab's defaults, which follow the libraries found here, then
the campaign's), the patches' content in order, and ``RECIPE`` (the steps below). It lives in
``builds/KEY/`` (``$PGLAB_BUILDS``, else the lab home's ``builds/``): ``install/`` (bin, lib,
share), ``build.log`` and ``build.json`` (what it was built from and with). A second campaign
with the same definition finds it there; a lock keeps two pglabs from building one key at once.

The steps, each a child process through ``procs`` with its output appended to the log: unpack
the tarball (or copy the tree) into a scratch directory; apply the patches with ``patch -p1``
(one that does not apply stops the build, naming the file and the hunk); configure and make (a
tree without ``meson.build``: PostgreSQL 15 and older) or meson and ninja (16 and later); build
and install the contrib modules pglab uses with pgbench and the server. The install goes to a
staging directory first and is moved in place only when everything passed, so a failed or
interrupted build stores nothing but its log (``builds/KEY.failed.log``), which the error quotes.

Where ccache is installed, compiling goes through it (its cache in ``builds/ccache``; meson
finds it by itself): a patched build of a source built before recompiles only what the patch
changed, in a fraction of the time. Builds run as pglab's own user; the tree is left
world-readable so that the unprivileged server account can run it.

Typed: ``build.json`` is a :class:`BuildInfo` (its patches :class:`Patch`, a commit's
:class:`GitSource`), read back as written; :class:`BuildFacts` is what a run's fingerprint
keeps of it (``facts_of``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from pglab import procs
from pglab.campaign import git_refs
from pglab.campaign.spec import BuildSpec
from pglab.errors import BuildError, CommandError
from pglab.fingerprints import BuildFacts, Fingerprint, GitSource, Patch
from pglab.lab import Lab, locked

RECIPE = 1  # raise when the steps change: builds made by older steps are then not reused
CONTRIB = ("pg_buffercache", "pg_stat_statements")  # the buffers sampler; pgbench users' habit
STEP_TIMEOUT = 4 * 3600.0
TAIL_LINES = 30
TARBALL = re.compile(r"\.(tar|tar\.gz|tgz|tar\.bz2|tbz2|tar\.xz|txz|tar\.zst)$")

Progress = Callable[[str], None]  # told each step as it begins ("configuring", …)


class BuildInfo(TypedDict, total=False):
    """``build.json``: what a build was made from and with. Written whole by ``_build``
    (``git`` only for a commit); the campaign's own paths (``source``, ``patches``, ``git``)
    laid over it when a campaign finds the build in the cache."""

    key: str
    recipe: int
    source: str
    source_sha256: str
    options: list[str]
    patches: list[Patch]
    libraries: list[str]
    git: GitSource
    compiler: str
    system: str  # "meson" or "configure"
    effective_options: list[str]
    ccache: bool
    version_text: str
    version: str
    built_at: float
    build_seconds: float
    step_seconds: dict[str, float]
    spread_pct: float  # not in build.json: this machine's spread of identical builds


def facts_of(info: BuildInfo) -> BuildFacts:
    """What the fingerprint keeps of ``info`` (in this order: the stored order of keys)."""
    out = BuildFacts(
        version=info.get("version"),
        source=info.get("source"),
        source_sha256=info.get("source_sha256"),
        options=info.get("options"),
        effective_options=info.get("effective_options"),
        patches=info.get("patches"),
        compiler=info.get("compiler"),
        system=info.get("system"),
        key=info.get("key"),
        build_seconds=info.get("build_seconds"),
    )
    if "git" in info and info["git"] is not None:
        out["git"] = info["git"]
    if "spread_pct" in info:  # this machine's spread of identical builds (build_spread)
        out["spread_pct"] = info["spread_pct"]
    return out


def read_info(text: str) -> BuildInfo:
    """A ``build.json`` as ``_build`` wrote it (JSON text: the one place it is typed)."""
    info: BuildInfo = json.loads(text)
    return info


@dataclass(frozen=True)
class Build:
    """A build in the cache; ``built_now`` when this call made it."""

    root: Path
    info: BuildInfo
    built_now: bool = False

    @property
    def bindir(self) -> Path:
        return self.root / "install" / "bin"

    @property
    def key(self) -> str:
        return self.root.name

    @property
    def log(self) -> Path:
        return self.root / "build.log"


def builds_dir(lab: Lab) -> Path:
    """Where builds are kept: ``$PGLAB_BUILDS`` (several lab homes may share one), else
    ``builds/`` in the lab home."""
    env = os.environ.get("PGLAB_BUILDS")
    return Path(env).expanduser().absolute() if env else lab.home / "builds"


def cached(lab: Lab) -> list[Build]:
    """Every finished build of the cache, newest first."""
    root = builds_dir(lab)
    found = []
    for info_path in root.glob("*/build.json") if root.is_dir() else ():
        try:
            found.append(Build(info_path.parent, read_info(info_path.read_text())))
        except (OSError, ValueError):
            continue  # a build.json being written, or damaged: not a usable build
    return sorted(found, key=lambda b: b.info.get("built_at", 0), reverse=True)


def ensure(spec: BuildSpec, lab: Lab, progress: Progress | None = None) -> Build:
    """The build of ``spec``: from the cache, else built now (``progress`` is told each
    step). Raises BuildError, naming the problem and quoting the log, when it cannot be made."""
    say = progress or (lambda step: None)
    source = Path(spec.source)
    if not source.exists():
        raise BuildError(
            f"build source {source} does not exist",
            hint="give a PostgreSQL source tree or release tarball (postgresql-X.Y.tar.bz2 "
            "from https://www.postgresql.org/ftp/source/, or `apt-get source postgresql-15` "
            "with a deb-src entry)",
        )
    if source.is_file() and not TARBALL.search(source.name) and spec.commit is None:
        raise BuildError(f"build source {source} is neither a directory nor a .tar.* tarball")
    for patch in spec.patches:
        if not Path(patch).is_file():
            raise BuildError(
                f"patch {patch} does not exist",
                hint="patches are files (relative: "
                "to the campaign file), applied in order with patch -p1",
            )
    placing = [o for o in spec.options if o.startswith(("--prefix", "-Dprefix", "--destdir"))]
    if placing:
        raise BuildError(
            f"build options may not say where it is installed ({', '.join(placing)})",
            hint="pglab installs each build in its build cache; leave the prefix out",
        )
    if spec.commit is not None:  # a commit names its tree: nothing to hash
        source_sha = "git-tree:" + git_refs.tree_of(str(source), spec.commit)
    else:
        say("hashing the source")
        source_sha = source_hash(source)
    patches = [Patch(name=Path(p).name, path=p, sha256=file_hash(Path(p))) for p in spec.patches]
    libraries = found_libraries()
    key = build_key(source_sha, spec.options, patches, libraries)
    root = builds_dir(lab) / key
    done = root / "build.json"
    # a build of the same content made from other paths: named by this campaign's own files
    given = BuildInfo(source=str(source), patches=patches)
    if spec.commit is not None:  # a build of the same tree may have been made for another commit
        given["git"] = GitSource(
            clone=str(source),
            ref=spec.git_ref,
            commit=spec.commit,
            subject=git_refs.subject_of(str(source), spec.commit),
        )
    if done.exists():
        return Build(root, _over(read_info(done.read_text()), given))
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        if root.parent.stat().st_uid == os.geteuid():
            root.parent.chmod(0o755)  # the server account runs the builds from here
    except OSError as exc:
        raise BuildError(
            f"cannot make the build cache {root.parent}: {exc.strerror}",
            hint="set PGLAB_BUILDS (or the lab directory) to a directory you can write",
        ) from exc
    waiting = "waiting for another pglab that builds the same definition"
    with locked(root.parent / f"{key}.lock", on_wait=lambda: say(waiting)):
        if done.exists():  # the other pglab finished it
            return Build(root, _over(read_info(done.read_text()), given))
        info = BuildInfo(
            key=key,
            recipe=RECIPE,
            source=str(source),
            source_sha256=source_sha,
            options=list(spec.options),
            patches=patches,
            libraries=libraries,
        )
        info.update(given)
        _build(root, info, source, say)
    return Build(root, _over(read_info(done.read_text()), given), built_now=True)


def _over(info: BuildInfo, given: BuildInfo) -> BuildInfo:
    """``info`` with ``given``'s keys laid over it (``info | given``, typed)."""
    out = info.copy()
    out.update(given)
    return out


def build_key(
    source_sha: str, options: tuple[str, ...], patches: list[Patch], libraries: list[str]
) -> str:
    ident = {
        "recipe": RECIPE,
        "source": source_sha,
        "options": list(options),
        "patches": [(p["name"], p["sha256"]) for p in patches],
        "libraries": libraries,
    }
    data = json.dumps(ident, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def file_hash(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_hash(source: Path) -> str:
    """A tarball's sha256, or one over every file of a tree (its path, mode and content; a
    symlink by its target), ``.git`` aside."""
    if source.is_file():
        return file_hash(source)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(source).as_posix()
            if path.is_symlink():
                h.update(f"L {rel} {os.readlink(path)}\n".encode())
            elif path.is_file():
                h.update(f"F {rel} {path.stat().st_mode & 0o111:o} {file_hash(path)}\n".encode())
    return h.hexdigest()


# the libraries the default options ask for when found: (name, pkg-config modules)
LIBRARIES = (
    ("lz4", ("liblz4",)),
    ("zstd", ("libzstd",)),
    ("icu", ("icu-uc", "icu-i18n")),
    ("openssl", ("openssl",)),
    ("readline", ("readline",)),
    ("zlib", ("zlib",)),
)


def found_libraries() -> list[str]:
    """Which of LIBRARIES this machine can build with (their pkg-config files are there)."""
    pkg_config = shutil.which("pkg-config")
    if pkg_config is None:
        return []
    found = []
    for name, modules in LIBRARIES:
        proc = procs.run([pkg_config, "--exists", *modules], timeout=30, check=False)
        if proc.returncode == 0:
            found.append(name)
    return found


def default_options(meson: bool, libraries: list[str]) -> list[str]:
    """A production-like build: no assertions, -O2, and every library of LIBRARIES that is
    here (those missing are turned off, so that configure does not stop on them)."""
    has = set(libraries)
    if meson:
        out = ["--buildtype=release", "-Doptimization=2", "-Dcassert=false", "-Dtap_tests=disabled"]
        out += [
            f"-D{n}={'enabled' if n in has else 'disabled'}"
            for n in ("lz4", "zstd", "icu", "readline", "zlib")
        ]
        out.append(f"-Dssl={'openssl' if 'openssl' in has else 'none'}")
        return out
    out = ["CFLAGS=-O2"]
    out += [f"--with-{n}" for n in ("lz4", "zstd", "icu", "openssl") if n in has]
    out += [f"--without-{n}" for n in ("readline", "zlib") if n not in has]
    return out


def c_compiler() -> str | None:
    """The C compiler configure and meson pick: $CC, else gcc, else cc."""
    return os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")


def compiler() -> str:
    """The C compiler's first line of ``--version``."""
    cc = c_compiler()
    if cc is None:
        raise BuildError(
            "no C compiler (cc) to build PostgreSQL with",
            hint="apt-get install build-essential bison flex pkg-config (and liblz4-dev "
            "libzstd-dev libicu-dev libssl-dev libreadline-dev zlib1g-dev for the libraries)",
        )
    out = procs.run([cc, "--version"], timeout=30).stdout
    return out.splitlines()[0].strip() if out else cc


def facts(fp: Fingerprint) -> dict[str, str]:
    """A built server's definition in words, from a run's fingerprint (none for a server
    pglab did not build): what ``show``, ``compare`` and the report name."""
    b = fp.get("build")
    if not b:
        return {}
    patches = ", ".join(f"{p['name']} (sha256 {p['sha256'][:12]})" for p in b.get("patches") or ())
    git = b.get("git")
    source = (
        f"{Path(str(b.get('source'))).name} at {git['commit'][:12]} ({git.get('ref')}: "
        f"{git.get('subject')})"
        if git
        else f"{Path(str(b.get('source'))).name} (sha256 {str(b.get('source_sha256'))[:12]})"
    )
    return {
        "build source": source,
        "build options": " ".join(b.get("effective_options") or ()) or "none",
        "build patches": patches or "none",
        "compiler": str(b.get("compiler")),
    }


# -- the steps -----------------------------------------------------------------------------


class _Steps:
    """One build in a scratch directory: each step a child whose output goes to the log."""

    def __init__(self, scratch: Path, say: Progress):
        self.scratch = scratch
        self.log = scratch / "build.log"
        self.say = say
        self.jobs = str(max(1, os.cpu_count() or 1))
        self.times: dict[str, float] = {}
        self.env: dict[str, str] = {}
        self.ccache = shutil.which("ccache")
        if self.ccache:  # compiled objects shared between builds (a patch recompiles little)
            self.env["CCACHE_DIR"] = str(scratch.parent / "ccache")

    def run(self, step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
        """Run one command of ``step``; raise with the log's last lines if it fails."""
        self.say(step)
        t0 = time.monotonic()
        with open(self.log, "a") as log:
            log.write(f"\n=== {step}: {' '.join(argv)} (in {cwd})\n")
            log.flush()
            start = log.tell()
            proc = procs.spawn(
                argv, cwd=cwd, env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT
            )
            with procs.owned(proc):
                try:
                    code = proc.wait(timeout=STEP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    code = None
        self.times[step] = self.times.get(step, 0.0) + time.monotonic() - t0
        said = self.log.read_text(errors="replace")[start:]
        if code != 0:
            why = "did not finish" if code is None else f"failed (exit {code})"
            raise _StepFailed(f"{step} {why}: {' '.join(argv[:2])}", said)
        return said


class _StepFailed(Exception):
    def __init__(self, what: str, output: str):
        super().__init__(what)
        self.what = what
        self.output = output


def _build(root: Path, info: BuildInfo, source: Path, say: Progress) -> None:
    """Build into a scratch directory beside ``root`` and move it in place when it passed."""
    scratch = root.with_name(f"{root.name}.tmp-{os.getpid()}")
    failed_log = root.with_name(f"{root.name}.failed.log")
    for stale in root.parent.glob(f"{root.name}.tmp-*"):  # of a killed pglab: the lock is ours
        shutil.rmtree(stale, ignore_errors=True)
    scratch.mkdir(parents=True)
    steps = _Steps(scratch, say)
    t0 = time.monotonic()
    try:
        info["compiler"] = compiler()
        git = info.get("git")
        tree = _unpack(steps, source, git["commit"] if git else None)
        for patch in info["patches"]:
            _apply(steps, tree, patch)
        meson = (tree / "meson.build").exists()
        options = default_options(meson, info["libraries"]) + info["options"]
        system = "meson" if meson else "configure"
        ccache = steps.ccache is not None
        info.update(BuildInfo(system=system, effective_options=options, ccache=ccache))
        stage = scratch / "stage"
        if meson:
            _meson(steps, tree, root / "install", options, stage)
        else:
            _configure_make(steps, tree, root / "install", options, stage)
        staged = stage / str(root / "install").lstrip("/")
        staged.rename(scratch / "install")
        shutil.rmtree(stage)
        shutil.rmtree(scratch / "src")
        version = procs.run(
            [str(scratch / "install" / "bin" / "postgres"), "--version"], timeout=30
        ).stdout.strip()
        info.update(
            BuildInfo(
                version_text=version,
                version=version.rsplit(" ", 1)[-1],
                built_at=time.time(),
                build_seconds=round(time.monotonic() - t0, 1),
                step_seconds={k: round(v, 1) for k, v in steps.times.items()},
            )
        )
        (scratch / "build.json").write_text(json.dumps(info, indent=2))
        for path in (scratch, *scratch.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)  # a half-moved earlier attempt
        scratch.rename(root)
        failed_log.unlink(missing_ok=True)
    except _StepFailed as exc:
        _keep_log(steps.log, failed_log)
        tail = "\n".join(exc.output.rstrip().splitlines()[-TAIL_LINES:])
        raise BuildError(
            f"building PostgreSQL from {source} failed: {exc.what}\n--- build log (last "
            f"lines; whole log: {failed_log}) ---\n{tail}",
            hint="nothing was run or stored; fix the source, options or patches (a missing "
            "library: apt-get install its -dev package) and run again",
        ) from None
    except (CommandError, OSError) as exc:
        _keep_log(steps.log, failed_log)
        raise BuildError(
            f"building PostgreSQL from {source} failed: {exc}",
            hint=f"the build log is kept in {failed_log}",
        ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _keep_log(log: Path, failed_log: Path) -> None:
    if log.exists():
        shutil.copyfile(log, failed_log)


def _unpack(steps: _Steps, source: Path, commit: str | None = None) -> Path:
    """A copy of the source to build in: the tarball unpacked, the tree copied, or a git
    clone's commit exported (``git archive``: the commit's files, not the clone's state)."""
    into = steps.scratch / "src"
    into.mkdir()
    if commit is not None:
        tar = steps.scratch / "commit.tar"
        steps.run(
            f"exporting {commit[:10]} from git",
            [
                git_refs.git(),
                "-c",
                f"safe.directory={source}",
                "-C",
                str(source),
                "archive",
                "--format=tar",
                f"--prefix={source.name}/",
                "-o",
                str(tar),
                commit,
            ],
            cwd=steps.scratch,
        )
        steps.run("unpacking", ["tar", "-xf", str(tar), "-C", str(into)], cwd=steps.scratch)
        tar.unlink()
    elif source.is_file():
        steps.run("unpacking", ["tar", "-xf", str(source), "-C", str(into)], cwd=steps.scratch)
    else:
        steps.say("copying the source tree")
        shutil.copytree(
            source, into / source.name, symlinks=True, ignore=shutil.ignore_patterns(".git")
        )
    tops = [p for p in into.iterdir() if p.is_dir()]
    tree = tops[0] if len(tops) == 1 else into
    if not (tree / "configure").exists() and not (tree / "meson.build").exists():
        raise _StepFailed(f"{source} is not a PostgreSQL source (no configure, no meson.build)", "")
    return tree


def _apply(steps: _Steps, tree: Path, patch: Patch) -> None:
    argv = ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", patch["path"]]
    try:
        steps.run(f"patching ({patch['name']})", argv, cwd=tree)
    except _StepFailed as exc:
        raise _StepFailed(
            f"patch {patch['path']} does not apply: {patch_problem(exc.output)}", exc.output
        ) from None


def patch_problem(output: str) -> str:
    """What ``patch`` said went wrong, in one line: the file and the hunk that failed."""
    current = None
    for line in output.splitlines():
        if line.startswith("patching file "):
            current = line.removeprefix("patching file ").strip()
        failed = re.match(r"Hunk #(\d+) FAILED at (\d+)", line)
        if failed:
            return f"hunk #{failed.group(1)} of {current} failed (at line {failed.group(2)})"
        if "can't find file to patch" in line:
            return "a file it patches is not in the source (wrong -p level or wrong tree?)"
        if "Reversed (or previously applied) patch detected" in line:
            return f"{current} already has this change (the patch is applied, or reversed)"
        if "Only garbage was found" in line or "malformed patch" in line:
            return "it is not a patch (no diff found in it)"
    return "see the log below"


def _configure_make(
    steps: _Steps, tree: Path, prefix: Path, options: list[str], stage: Path
) -> None:
    cc = {"CC": f"{steps.ccache} {c_compiler()}"} if steps.ccache else None
    steps.run("configuring", ["./configure", f"--prefix={prefix}", *options], cwd=tree, env=cc)
    steps.run("compiling", ["make", f"-j{steps.jobs}"], cwd=tree)
    for module in CONTRIB:
        steps.run(
            "compiling contrib", ["make", f"-j{steps.jobs}", "-C", f"contrib/{module}"], cwd=tree
        )
    steps.run("installing", ["make", "install", f"DESTDIR={stage}"], cwd=tree)
    for module in CONTRIB:
        steps.run(
            "installing",
            ["make", "-C", f"contrib/{module}", "install", f"DESTDIR={stage}"],
            cwd=tree,
        )


def _meson(steps: _Steps, tree: Path, prefix: Path, options: list[str], stage: Path) -> None:
    meson = shutil.which("meson")
    if meson is None:
        raise _StepFailed(
            "meson is not installed (PostgreSQL 16 and later build with it)",
            "apt-get install meson ninja-build",
        )
    build = steps.scratch / "src" / "build"
    steps.run(
        "configuring",
        [meson, "setup", str(build), str(tree), f"--prefix={prefix}", *options],
        cwd=tree,
    )
    steps.run("compiling", ["ninja", "-C", str(build), f"-j{steps.jobs}"], cwd=tree)
    steps.run("installing", [meson, "install", "-C", str(build), "--destdir", str(stage)], cwd=tree)
