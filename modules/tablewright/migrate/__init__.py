"""The migrate stage: reads a table and each item's writes, runs them as a resumable, rate-limited backfill."""
