// Evaluates IAM requests against an identity policy with @cloud-copilot/iam-simulate (tests/hostile/test_tenant_policies.py):
// stdin {"policy": {...}, "requests": [{"action", "resource", "context"}]}, stdout one decision per request:
// "Allowed", "ImplicitlyDenied", "ExplicitlyDenied", or "error: ..." when the simulator refuses the input.
import { runSimulation } from "@cloud-copilot/iam-simulate";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { policy, requests } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const decisions = [];
for (const request of requests) {
  const account = request.resource.split(":")[4];
  const answer = await runSimulation({
    identityPolicies: [{ name: "pattern", policy }],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    request: {
      action: request.action,
      principal: `arn:aws:iam::${account}:role/application`,
      resource: { accountId: account, resource: request.resource },
      contextVariables: request.context,
    },
  }, {});
  decisions.push(answer.resultType === "error" ? `error: ${JSON.stringify(answer.errors)}` : answer.overallResult);
}
process.stdout.write(JSON.stringify(decisions));
