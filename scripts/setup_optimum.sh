#!/usr/bin/env bash
# Installs Hugging Face's optimum-executorch (the exporter of Hugging Face
# models for ExecuTorch) and the packages it needs beyond .venv into the
# directory .optimum-site, for test/llm/test_optimum_executorch.py. That
# directory goes before .venv's packages on PYTHONPATH, so optimum-executorch
# runs on .venv's torch (2.13.0) and this project's executorch package:
# - optimum-executorch pins its own transformers (and tokenizers), which
#   must not replace the versions in .venv's pinned set;
# - it declares a dependency on upstream's executorch, which must not come
#   along (this project is `executorch`), so it is installed without
#   dependencies and its other requirements are resolved against .venv
#   (torch held at 2.13.0): only what .venv lacks or has at another version
#   lands in .optimum-site.
# Prints the directory on success; idempotent (a second run only checks).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$repo_root/.venv/bin/python"
site="$repo_root/.optimum-site"
optimum_executorch_version="1.1.0"
# Bumped when the set of packages changes, so existing installs redo it.
site_revision="2"
# optimum-executorch 1.1.0's requirements other than executorch, and
# coremltools 9.0: upstream executorch 1.5.1 brings it along, and
# optimum-executorch's recipe discovery imports every recipe module, the
# CoreML one calling into coremltools as it is imported.
requirements=("optimum~=2.0.0" "transformers==5.0.0rc1"
              "pytorch-tokenizers>=1.0.1" "accelerate>=0.26.0"
              "coremltools==9.0")
stamp="$site/.optimum-executorch-$optimum_executorch_version-r$site_revision"

if [ -f "$stamp" ]; then
  echo "$site"
  exit 0
fi
if [ ! -x "$python" ]; then
  echo "[setup_optimum] $python is missing: run scripts/setup.sh first" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "torch==2.13.0" > "$work/constraints.txt"
echo "[setup_optimum] resolving optimum-executorch $optimum_executorch_version's requirements against .venv" >&2
"$python" -m pip install -q --disable-pip-version-check --dry-run \
  --report "$work/report.json" -c "$work/constraints.txt" "${requirements[@]}" >&2
"$python" - "$work/report.json" > "$work/packages.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for item in report["install"]:
    name, version = item["metadata"]["name"], item["metadata"]["version"]
    if name.lower() in ("torch", "executorch"):
        sys.exit(f"[setup_optimum] resolving would change {name}; refusing")
    print(f"{name}=={version}")
PY
echo "[setup_optimum] installing into $site: $(tr '\n' ' ' < "$work/packages.txt")" >&2
rm -rf "$site.partial"
"$python" -m pip install -q --disable-pip-version-check --no-deps \
  --target "$site.partial" "optimum-executorch==$optimum_executorch_version" \
  -r "$work/packages.txt" >&2
rm -rf "$site"
mv "$site.partial" "$site"
touch "$stamp"
echo "$site"
