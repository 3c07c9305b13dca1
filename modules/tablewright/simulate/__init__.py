"""The throttle simulator: a day of declared traffic per second on every table and GSI (after capacity, before
lint, which proves its fixes with it)."""
