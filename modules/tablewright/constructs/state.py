"""Where the local backend keeps a stack's state (synth keeps it when it replaces its output)."""

from __future__ import annotations

# Local Terraform state lives beside the output directory (`terraform-state/<stack>.tfstate` next to
# `cdktf.out`), never in what synth replaces. The backend path is relative to the directory Terraform runs in
# (`<out>/stacks/<stack>`), so the output stays identical wherever the repository is checked out.
LOCAL_STATE_DIRECTORY = "terraform-state"


def local_state_path(stack_name: str) -> str:
    """The local backend's `path`, relative to the stack directory."""
    return f"../../../{LOCAL_STATE_DIRECTORY}/{stack_name}.tfstate"
