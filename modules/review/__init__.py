"""Review and plan gate: classify every Terraform change as blocked, window or safe."""
