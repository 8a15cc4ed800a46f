"""Two builds' servers run alike (issue 58): PostgreSQL 15 built by pglab twice (the tarball as
released and with a patch: ``pg15_build`` and ``pg15_patched``, kept in the build cache), each
started as a run's server is: the postmasters run from paths of one length and have one
environment, byte for byte, whatever the environment of the pglab that started them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from pglab import procs
from pglab.lab import Lab
from pglab.postgres import server, sources

pytestmark = pytest.mark.integration


def started(lab: Lab, spec: Any, name: str) -> tuple[dict[str, str], str, str]:
    """Start a cluster of ``spec``'s build named as the executor names one: the postmaster's
    environment, its executable's path and its command line."""
    binaries = sources.resolve(spec, lab)
    datadir = lab.clusters / name
    server.initdb(binaries, lab, datadir)
    with server.Cluster(binaries, lab, datadir, name) as cluster:
        cluster.start()
        assert cluster.proc is not None
        pid = cluster.proc.pid  # setpriv and prlimit exec: the postmaster itself
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        env = dict(e.decode().split("=", 1) for e in environ if e)
        exe = os.readlink(f"/proc/{pid}/exe")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    return env, exe, cmdline


def test_two_builds_servers_run_from_paths_of_one_length_with_one_environment(
    lab: Lab, pg15_build: dict[str, Any], pg15_patched: dict[str, Any], no_leftovers: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    assert pg15_build["build"].key != pg15_patched["build"].key
    tag = f"{os.getpid():07d}"
    monkeypatch.setenv("PGLAB_BIAS_TEST", "the caller's environment, never the server's")
    env_a, exe_a, cmd_a = started(lab, pg15_build["spec"], f"w{tag}-{'a' * 16}")
    monkeypatch.setenv("PGLAB_BIAS_TEST", "x" * 300)  # a longer one: no difference either
    monkeypatch.setenv("SOME_OTHER_VARIABLE", "y" * 100)
    env_b, exe_b, cmd_b = started(lab, pg15_patched["spec"], f"w{tag}-{'b' * 16}")
    assert env_a == env_b == procs.server_env()
    assert "PGLAB_BIAS_TEST" not in env_a and set(env_a) <= {"PATH", "LC_ALL", "LANG",
                                                              "LD_LIBRARY_PATH"}  # fmt: skip
    assert exe_a != exe_b and len(exe_a) == len(exe_b)
    assert exe_a.startswith(str(pg15_build["build"].root))
    # the command lines differ in the key, the data directory's name and the port only
    port = re.compile(r"port=\d+")
    assert len(port.sub("port=P", cmd_a)) == len(port.sub("port=P", cmd_b))
