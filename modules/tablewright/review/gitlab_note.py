"""Post the Tablewright review as the merge request's one review note, or edit it when it exists.

    python -m tablewright.review.gitlab_note review.md

The note is found by the marker line `review --changed-since` starts its Markdown with, among the notes
written by the token's own user (so nobody else's note is touched). Needs `GITLAB_REVIEW_TOKEN` (a project
access token with the `api` scope) and GitLab CI's CI_API_V4_URL and CI_PROJECT_ID; the merge request is
REVIEW_MERGE_REQUEST_IID (passed to a child pipeline) or CI_MERGE_REQUEST_IID. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path

MARKER = "<!-- tablewright-review -->"


def call(method: str, url: str, token: str, body: dict[str, str] | None = None) -> object:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"PRIVATE-TOKEN": token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def main(review: Path) -> int:
    body = review.read_text()
    if not body.startswith(MARKER):
        print(f"{review} does not start with {MARKER}: not a `review --changed-since` comment", file=sys.stderr)
        return 2
    token = os.environ["GITLAB_REVIEW_TOKEN"]
    api = os.environ["CI_API_V4_URL"]
    request = os.environ.get("REVIEW_MERGE_REQUEST_IID") or os.environ["CI_MERGE_REQUEST_IID"]
    notes = f"{api}/projects/{os.environ['CI_PROJECT_ID']}/merge_requests/{request}/notes"
    me = call("GET", f"{api}/user", token)
    assert isinstance(me, dict)
    page, found = 1, None
    while found is None:
        batch = call("GET", f"{notes}?per_page=100&page={page}&sort=asc&order_by=created_at", token)
        if not isinstance(batch, list) or not batch:
            break
        found = next((note["id"] for note in batch
                      if note["author"]["id"] == me["id"] and note["body"].startswith(MARKER)), None)
        page += 1
    if found is None:
        call("POST", notes, token, {"body": body})
    else:
        call("PUT", f"{notes}/{found}", token, {"body": body})
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
