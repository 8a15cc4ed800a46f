"""Security promises, checked on a real server and on pglab's own source: servers reachable only
through a private socket directory with trust limited to it, no user string ever given to a
shell, passwords never shown."""

from __future__ import annotations

import ast
import os
import shutil
import stat
from pathlib import Path

import psutil
import pytest

from pglab.campaign.spec import ServerSpec
from pglab.lab import Lab
from pglab.postgres import server
from pglab.postgres.sources import resolve
from pglab.store import mask_url

SRC = Path(__file__).resolve().parents[2] / "src" / "pglab"


@pytest.mark.integration
def test_a_server_listens_only_on_its_private_socket_directory(
    lab: Lab, tmp_path: Path, no_leftovers
) -> None:
    binaries = resolve(ServerSpec(), lab)
    datadir = lab.clusters / "security-check"
    server.initdb(binaries, lab, datadir)
    try:
        with server.Cluster(binaries, lab, datadir, "security-check") as cluster:
            cluster.start()
            with cluster.connect() as conn:
                listen = conn.execute("SHOW listen_addresses").fetchone()[0]
                rules = conn.execute(
                    "SELECT type, auth_method FROM pg_hba_file_rules WHERE error IS NULL"
                ).fetchall()
                sockets = conn.execute("SHOW unix_socket_directories").fetchone()[0]
            assert listen == ""
            # trust only through the socket (for sessions and a basebackup's replication
            # connection), no TCP rule
            assert rules == [("local", "trust"), ("local", "trust")]
            mode = stat.S_IMODE(os.stat(sockets).st_mode)
            assert mode == 0o700, oct(mode)
            assert os.stat(sockets).st_uid == (lab.run_as.uid if lab.run_as else os.getuid())
            pid = cluster.proc.pid
            tcp = [
                c for c in psutil.net_connections("inet") if c.pid == pid and c.status == "LISTEN"
            ]
            assert tcp == [], f"the server listens on TCP: {tcp}"
            if lab.run_as is not None:  # as root, servers never run as root
                assert psutil.Process(pid).uids().real == lab.run_as.uid != 0
    finally:
        shutil.rmtree(datadir, ignore_errors=True)


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def test_no_shell_anywhere_in_pglab() -> None:
    """Every external command is an argv list: no shell=True, os.system, os.popen or
    shell-string helpers, so no variant name, setting or path is ever parsed by a shell."""
    offenders = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for call in _calls(tree):
            name = ast.unparse(call.func)
            if name in (
                "os.system",
                "os.popen",
                "subprocess.getoutput",
                "subprocess.getstatusoutput",
            ):
                offenders.append(f"{path.name}:{call.lineno} {name}")
            for kw in call.keywords:
                if kw.arg == "shell" and not (
                    isinstance(kw.value, ast.Constant) and kw.value.value is False
                ):
                    offenders.append(f"{path.name}:{call.lineno} shell=")
    assert offenders == []


def test_only_procs_starts_processes() -> None:
    """One place runs external commands (and could later run them on another host)."""
    starters = ("subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_output",
                "os.execv", "os.execvp", "os.spawnv", "asyncio.create_subprocess_exec",
                "asyncio.create_subprocess_shell")  # fmt: skip
    found = sorted(
        f"{path.relative_to(SRC)}"
        for path in SRC.rglob("*.py")
        for call in _calls(ast.parse(path.read_text()))
        if ast.unparse(call.func) in starters
    )
    assert set(found) <= {"procs.py"}, found


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://lab:s3cr3t@db.example:5432/results",
        "postgres://lab:p%40ss%3Aword@localhost/results?sslmode=require",
        "postgresql://lab@h/db?password=s3cr3t&sslmode=disable",
    ],
)
def test_passwords_are_masked(url: str) -> None:
    masked = mask_url(url)
    assert "s3cr3t" not in masked and "p%40ss" not in masked and "***" in masked
