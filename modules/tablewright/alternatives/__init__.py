"""Alternatives to each global index (`explain`): each designed and costed as a blueprint of its own, from a
stack's computed design, capacity and cost."""
