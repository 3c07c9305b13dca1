# Policy on the plan gate's JSON (`tablewright gate --plan PLAN.json --format json`, schema/gate.schema.json):
# deny a plan with a blocked change, and a plan with window changes while the maintenance window is closed
# (or not declared). The same decision as the gate's exit code, in Rego, for pipelines that run their
# policies in OPA or conftest:
#
#   tablewright gate --plan plan.json --format json > gate.json || true
#   conftest test gate.json --policy examples/policy --namespace tablewright
#   opa eval --data examples/policy/tablewright.rego --input gate.json 'data.tablewright.deny'
package tablewright

import rego.v1

# The gate's document shape this policy reads. A new schema version may change what the fields mean.
supported_schema := 1

deny contains msg if {
	input.schema_version != supported_schema
	msg := sprintf("the gate's JSON has schema_version %v; this policy reads version %v", [input.schema_version, supported_schema])
}

# Every blocked change, each with the acknowledgement that would let it wait for the window instead.
deny contains msg if {
	input.schema_version == supported_schema
	some change in input.changes
	change.cls == "blocked"
	msg := sprintf("%s: blocked: %s %s (%s): %s%s", [
		input.stack, change.action, change.subject, change.address, change.reason, acknowledgement(change),
	])
}

# Window changes only inside the maintenance window.
deny contains msg if {
	input.schema_version == supported_schema
	input.verdict == "window"
	input.window_open != true
	msg := sprintf("%s: %d window change(s) and the maintenance window is %s", [
		input.stack, input.counts.window, window_state,
	])
}

window_state := sprintf("closed: it opens %s", [input.window_opens]) if {
	input.window_open == false
} else := "not declared (add maintenance_window to the blueprint)"

acknowledgement(change) := sprintf(" [--allow-%s lifts it into the window]", [change.unblocked_by]) if {
	change.unblocked_by != null
} else := ""

# Informational: what waits for the window even when it is open now.
warn contains msg if {
	input.schema_version == supported_schema
	some change in input.changes
	change.cls == "window"
	msg := sprintf("%s: window: %s %s: %s", [input.stack, change.action, change.subject, change.reason])
}
