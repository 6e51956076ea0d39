#!/usr/bin/env bash
# Deploys a build only once a person approves it in Gatehouse.
#
#   examples/deploy.sh BUILD [ENV]        e.g. examples/deploy.sh 42 prod
#
# `gatehouse ask` opens an approval gate whose payload is the deployment;
# the reviewer approves it, edits it (say, prod -> staging) or rejects it,
# and this script deploys exactly what was approved. Talks to
# $GATEHOUSE_URL (default http://127.0.0.1:7777) with $GATEHOUSE_TOKEN (an
# agent token: `gatehouse token create --role agent --name deployer`).
# $GATEHOUSE names the binary (default: `gatehouse` on PATH). Exit codes
# follow `gatehouse ask`: 0 deployed, 1 rejected, 2 nobody decided in time, 3 error.
set -euo pipefail

build=${1:?usage: deploy.sh BUILD [ENV]}
env=${2:-staging}
gatehouse=${GATEHOUSE:-gatehouse}

payload=$(mktemp)
trap 'rm -f "$payload"' EXIT
printf '{"build": "%s", "env": "%s", "requested_by": "%s"}\n' "$build" "$env" "${USER:-ci}" >"$payload"

set +e
decision=$("$gatehouse" ask "Deploy build **$build** to **$env**?" --payload "$payload" --timeout "${DEPLOY_TIMEOUT:-30m}" --priority high)
status=$?
set -e

case $status in
  0) ;;
  1)
    echo "deploy.sh: not deploying build $build: rejected" >&2
    echo "$decision"
    exit 1
    ;;
  2)
    echo "deploy.sh: not deploying build $build: nobody decided in time" >&2
    exit 2
    ;;
  *) exit 3 ;;
esac

# An edit replaces the payload: deploy what the reviewer approved, not what was asked.
read -r build env < <(python3 -c '
import json, sys
decision, asked = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))
final = decision.get("payload") or asked
print(final["build"], final["env"])' "$decision" "$payload")

echo "deploying build $build to $env (approved by $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["decided_by"])' "$decision"))"
# ... your real deployment command goes here, e.g.: kubectl set image deploy/web web=registry/web:"$build"
