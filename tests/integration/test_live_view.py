"""The live view as a person sees it: `pglab run` in a 100×30 tmux pane, `pglab watch` in
another, both read with `tmux capture-pane` while a real campaign runs on the embedded
PostgreSQL 18. The TPS sparkline, a checkpoint (checkpoint_timeout = 30s: the server log says
when it began) and the waits show in both; Ctrl-C ends the watching and the run goes on to end
ok; Ctrl-C in the run's pane stops the campaign, leaving nothing running.

Each pane runs `bash -c 'trap : INT; pglab …; echo exit=$?; sleep 600'`: the shell outlives
pglab, so the pane keeps what pglab printed and its exit status."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import lab_processes

from pglab.lab import Lab

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "{name}"
[dataset]
scale = 1
[workload]
script = "tpcb-like"
duration = {seconds}
clients = 2
[server.settings]
checkpoint_timeout = "30s"
"""


class Tmux:
    """A tmux server of the test's own (its socket in the test's directory), killed with every
    pane at the end."""

    def __init__(self, socket: Path) -> None:
        self.socket = str(socket)

    def __call__(self, *args: str) -> str:
        argv = ["tmux", "-S", self.socket, *args]
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout

    def pane(self, name: str, argv: list[str]) -> None:
        line = " ".join(shlex.quote(a) for a in argv)
        script = f"trap : INT; {line}; echo exit=$?; sleep 600"
        self(
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "100",
            "-y",
            "30",
            f"bash -c {shlex.quote(script)}",
        )

    def screen(self, name: str) -> str:
        return self("capture-pane", "-p", "-t", name)

    def wait(self, name: str, ok: Callable[[str], bool], what: str, seconds: float = 120) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = self.screen(name)
            if ok(text):
                return text
            time.sleep(0.5)
        raise AssertionError(f"{what} never showed in pane {name}; it shows:\n{self.screen(name)}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("the live view's tests draw it in tmux (apt-get install tmux; .ci/run does)")
    t = Tmux(tmp_path / "tmux.sock")
    try:
        yield t
    finally:
        t.kill()


def pglab(lab: Lab, store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pglab", *args, "--lab-dir", str(lab.home), "--store", str(store)]


def panel(text: str) -> list[str]:
    """The lines of the live panel on the screen (its frame's │ … │)."""
    return [line for line in text.splitlines() if line.startswith("│")]


def row(text: str, name: str) -> str:
    return next((line for line in panel(text) if line.startswith(f"│ {name} ")), "")


def shows_a_checkpoint_and_waits(text: str) -> bool:
    tps, ckpt = row(text, "TPS"), row(text, "checkpoint")
    sparkline = any(block in tps for block in "▁▂▃▄▅▆▇█")
    return sparkline and "▲" in ckpt and "last 5 s:" in row(text, "waits")


def test_run_and_watch_show_tps_checkpoints_and_waits_watch_leaves_on_ctrl_c(
    tmp_path: Path, lab: Lab, tmux: Tmux, no_leftovers
) -> None:
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(name="live-tmux", seconds=40))
    store = tmp_path / "r.sqlite"
    tmux.pane("run", pglab(lab, store, "run", str(tmp_path / "c.toml")))
    tmux.wait("run", lambda s: "TPS" in s, "the live panel")
    # asked for another campaign, watch names the one running (asked early: the run lasts
    # 40 s, and on a loaded machine the checks after its checkpoint took longer than that)
    other = subprocess.run(pglab(lab, store, "watch", "nosuch"), capture_output=True, text=True)
    assert other.returncode == 2
    assert "campaign 'nosuch' is not running" in other.stderr and "running now: live-tmux" in (
        other.stderr
    )
    tmux.pane("watch", pglab(lab, store, "watch", "live-tmux"))
    for name in ("run", "watch"):
        screen = tmux.wait(name, shows_a_checkpoint_and_waits, "a checkpoint ▲ under TPS, waits")
        assert "pglab · live-tmux · run 1/1: base #1" in screen
        assert "now," in row(screen, "TPS") and "ms avg" in row(screen, "latency")
        assert "time," in row(screen, "checkpoint")  # when it began, and why: checkpoint_timeout
        assert "ETA" in row(screen, "campaign")
        assert max(len(line) for line in screen.splitlines()) <= 100
    # the same view as text, once, where the output is not a terminal
    once = subprocess.run(pglab(lab, store, "watch", "--once"), capture_output=True, text=True)
    assert once.returncode == 0 and "pglab · live-tmux · run 1/1" in once.stdout, once
    assert "▲" in once.stdout and "last 5 s:" in once.stdout
    assert "Ctrl-C stops the watching, not the campaign" in tmux.screen("watch")
    assert "Ctrl-C stops the campaign" in tmux.screen("run")
    tmux("send-keys", "-t", "watch", "C-c")
    watched = tmux.wait("watch", lambda s: "exit=" in s, "watch's end")
    assert "stopped watching; campaign live-tmux goes on" in watched and "exit=0" in watched
    assert len([line for line in watched.splitlines() if line.startswith("╭")]) == 1, watched
    # the run went on, and ends ok with its table
    ended = tmux.wait("run", lambda s: "exit=" in s, "the run's end", seconds=90)
    assert "1 run(s) ok, 0 failed" in ended and "exit=0" in ended, ended
    assert not list((lab.home / "live").glob("*.json"))


def test_ctrl_c_in_the_run_pane_stops_the_campaign_and_everything_it_started(
    tmp_path: Path, lab: Lab, tmux: Tmux, no_leftovers
) -> None:
    (tmp_path / "c.toml").write_text(CAMPAIGN.format(name="live-stop", seconds=30))
    store = tmp_path / "r.sqlite"
    tmux.pane("run", pglab(lab, store, "run", str(tmp_path / "c.toml")))
    tmux.wait("run", lambda s: "now," in row(s, "TPS"), "TPS in the live panel")
    tmux("send-keys", "-t", "run", "C-c")
    ended = tmux.wait("run", lambda s: "exit=" in s, "the run's end", seconds=60)
    assert "interrupted: every server and pgbench pglab started has been stopped" in ended
    assert "exit=130" in ended
    assert len([line for line in ended.splitlines() if line.startswith("╭")]) == 1, ended
    time.sleep(1)
    assert not lab_processes(lab.home)
    assert not list((lab.home / "live").glob("*.json"))
