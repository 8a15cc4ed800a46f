"""Running a campaign: the use case every command goes through (``campaign_run``), the executor,
the phase runners, run metrics, the live state, resume after a dead pglab. The plan and the
checks before it are ``planning/``'s."""
