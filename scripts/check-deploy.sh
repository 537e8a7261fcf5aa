#!/usr/bin/env bash
# Checks the deployment files offline, against schemas bundled in PyPI packages:
# - deploy/kubernetes/*.yaml with kubernetes-validate, strictly (an unknown field is an
#   error), for the oldest and newest Kubernetes versions we claim; kustomization.yaml has
#   no schema there, so only its list of resources is checked;
# - docker-compose.yml against the compose specification with check-jsonschema;
# - deploy/haproxy.cfg with `haproxy -c`, when haproxy is installed (apt-get install haproxy).
# The validators go into the private environment .build-test-venv, the one
# scripts/install-deps.sh --test makes for schemathesis. Exits non-zero on any error.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

venv="$root/.build-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# Pinned: each release bundles its own schemas, and kubernetes-validate drops old
# Kubernetes versions as it adds new ones. pip needs no network once they are installed.
"$venv/bin/pip" install -q --disable-pip-version-check 'kubernetes-validate==1.37.0' 'check-jsonschema==0.39.0'

status=0
manifests=()
for file in deploy/kubernetes/*.yaml; do
    [ "$(basename "$file")" = kustomization.yaml ] || manifests+=("$file")
done

echo "==> deploy/kubernetes (kubernetes-validate --strict)"
for version in 1.29 1.37; do
    # A resource whose kind or apiVersion has no schema (a misspelt kind) is only a
    # warning with exit status 0; with --quiet, any output at all is a failure.
    if ! output="$("$venv/bin/kubernetes-validate" --strict --quiet -k "$version" "${manifests[@]}" 2>&1)" || [ -n "$output" ]; then
        printf '%s\n' "$output"
        echo "error: Kubernetes $version: the manifests above do not validate" >&2
        status=1
    else
        echo "ok: Kubernetes $version"
    fi
done

echo "==> deploy/kubernetes/kustomization.yaml (resources)"
# Every listed file exists, and every manifest but the example Secret is listed.
"$venv/bin/python" - "${manifests[@]}" <<'EOF' || status=1
import os, sys, yaml
with open("deploy/kubernetes/kustomization.yaml") as f:
    listed = yaml.safe_load(f)["resources"]
expected = sorted(os.path.basename(m) for m in sys.argv[1:] if not m.endswith("secret.example.yaml"))
missing = [r for r in listed if not os.path.isfile(os.path.join("deploy/kubernetes", r))]
unlisted = [m for m in expected if m not in listed]
for r in missing:
    print(f"error: kustomization.yaml lists {r}, which does not exist", file=sys.stderr)
for m in unlisted:
    print(f"error: kustomization.yaml does not list {m}", file=sys.stderr)
if missing or unlisted:
    sys.exit(1)
print("ok")
EOF

echo "==> docker-compose.yml (compose specification)"
# The ${VAR:?message} references stay as text: the schema takes any string there.
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec docker-compose.yml || status=1

echo "==> deploy/haproxy.cfg (haproxy -c)"
if command -v haproxy > /dev/null 2>&1; then
    # Its output is shown only on failure: the nodes' names resolve only inside the
    # compose network, and the warnings saying so are expected here.
    if ! output="$(haproxy -c -f deploy/haproxy.cfg 2>&1)"; then
        printf '%s\n' "$output"
        status=1
    else
        echo "ok"
    fi
else
    echo "skipped: haproxy is not installed"
fi

exit "$status"
