"""One error hierarchy: a LabError is something the user can fix; anything else is a bug.

The CLI prints a LabError as ``error: <message>`` followed by ``hint: <hint>`` and exits non-zero.
Any other exception shows a traceback, because it means pglab itself is wrong.
"""

from __future__ import annotations


class LabError(Exception):
    """An error the user can act on. ``hint`` says what to do about it."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class CampaignError(LabError):
    """The campaign file (or the options of ``pglab quick``) is wrong."""


class SettingsError(LabError):
    """One or more PostgreSQL settings are unknown or have invalid values."""


class ServerError(LabError):
    """A PostgreSQL server could not be set up, started or stopped."""

    def __init__(self, message: str, hint: str | None = None, log_tail: str = ""):
        if log_tail:
            message = f"{message}\n--- server log (last lines) ---\n{log_tail.rstrip()}"
        super().__init__(message, hint)
        self.log_tail = log_tail


class PgbenchError(LabError):
    """pgbench failed; the message carries pgbench's own words."""


class CommandError(LabError):
    """An external command failed or timed out."""


class StoreError(LabError):
    """The results store cannot be opened or written."""


class HostError(LabError):
    """A host over SSH cannot be reached, its key is not the known one, or a command failed
    there."""


class BuildError(LabError):
    """PostgreSQL could not be built from a source tree or tarball (a patch that does not
    apply, a configure or compile step that failed); the message carries the build log's last
    lines."""


class ProfileError(LabError):
    """The CPU profiler (Linux perf) is missing, forbidden or failed; said before a profiled
    campaign starts anything."""


class WorkloadError(LabError):
    """A captured workload cannot be made or read: a log without the settings a replay needs,
    in another language, a workload file of a newer pglab, a dump of another database."""
