"""Telemetry: samplers that watch each measured phase and hand back per-second tables."""
