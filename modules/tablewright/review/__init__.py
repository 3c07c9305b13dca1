"""The review stage: reads a Terraform plan (or two syntheses) and the stacks, and produces every change
classified as blocked, window or safe, with the gate's decision."""
