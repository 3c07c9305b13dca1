"""The exception model validators raise, so the loader can show the problem, its fix and its field."""

from tablewright.errors import ErrorCode


class Invalid(ValueError):
    def __init__(
        self, message: str, hint: str | None = None, field: str | None = None, *, code: ErrorCode
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code
        # For model-level checks: the field (of the model being validated) the problem is about.
        self.field = field
