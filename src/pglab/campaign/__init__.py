"""Campaign files: TOML parsed and checked into frozen specs."""
