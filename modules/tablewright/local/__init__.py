"""The local AWS stage: reads stacks, produces a running emulator with their tables (`tablewright local`,
`tablewright.testing`) and Terraform runs pointed at it (`tablewright terraform --endpoint`).

`emulator` is moto's server with the shims a synthesized stack needs, on 127.0.0.1 only; `tables` creates each
stack's table as synth declares it; `terraform` runs Terraform in a stack's directory with a provider override
and a provider mirror."""
