"""The stack value: reads loaded blueprints and produces one `Stack` each (design, capacity with its traffic
model, cost and lint findings, computed once)."""
