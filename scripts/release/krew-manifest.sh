#!/usr/bin/env bash
# krew-manifest.sh — the release's krew manifest: plugins/headroom.yaml (the template) with the
# version and one platform per plugin archive, its URI under the release's base URL and its sha256.
#
#   scripts/release/krew-manifest.sh --base-url URL --version V [--out FILE] ARCHIVE...
#   scripts/release/krew-manifest.sh --check FILE
#
#   --base-url  where the archives will be published: each platform's uri is URL/<archive name>
#   --version   the release's version (semantic versioning, with or without the leading v):
#               spec.version is v<V>, and each ARCHIVE must be named
#               kubectl-headroom-<tag>-linux-<arch>.tar.gz, <tag> being V with '+' spelled '-'
#               (scripts/release/plugin.sh names them so)
#   --out       where to write the manifest (default: stdout)
#   ARCHIVE     one plugin archive per platform (linux/amd64, linux/arm64); os and arch come from
#               the name; bin: kubectl-headroom, files: everything ("*" to ".")
#   --check     only check FILE (a template or a written manifest) against the rules below
#
# Every manifest it writes, and the template itself with --check, is checked against the rules
# krew applies to a plugin manifest (krew's internal/index/validation), offline:
#   apiVersion krew.googlecontainertools.github.com/v1alpha2, kind Plugin; metadata.name matches
#   ^[\w-]+$; a one-line spec.shortDescription; spec.version is v-prefixed semantic versioning
#   (vX.Y.Z[-pre][+build]); at least one platform, and each has uri, a sha256 of 64 lowercase hex
#   digits, bin, files either absent or entries with from and to, and a selector with only os and
#   arch keys (no two platforms with the same one).
# For a written manifest also: each archive exists and holds only regular files and directories
# (krew's tar reader refuses anything else), kubectl-headroom among them, executable.
#
# Only linux archives exist: the binary needs glibc and Debian's libraries, and Debian has no
# Darwin cross toolchain, so there is no macOS platform (plugins/headroom.yaml says so too).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TEMPLATE=$ROOT/plugins/headroom.yaml

die() { echo "krew-manifest.sh: $*" >&2; exit 1; }

# check FILE [ARCHIVE...]: the krew rules above; with archives, each platform describes one.
check() {
  python3 - "$@" <<'PY'
import hashlib, re, sys, tarfile, yaml

path, archives = sys.argv[1], sys.argv[2:]
errors = []
def bad(msg):
    errors.append(msg)

try:
    m = yaml.safe_load(open(path))
except Exception as e:  # a YAML error is one more finding
    sys.exit("%s: not YAML: %s" % (path, e))
if not isinstance(m, dict):
    sys.exit("%s: not a mapping" % path)
if m.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
    bad("apiVersion is %r, not krew.googlecontainertools.github.com/v1alpha2" % m.get("apiVersion"))
if m.get("kind") != "Plugin":
    bad("kind is %r, not Plugin" % m.get("kind"))
name = (m.get("metadata") or {}).get("name") or ""
if not re.fullmatch(r"[\w-]+", name, re.ASCII):
    bad("metadata.name %r does not match ^[\\w-]+$" % name)
spec = m.get("spec") or {}
sd = spec.get("shortDescription") or ""
if not sd or "\n" in sd or "\r" in sd:
    bad("spec.shortDescription must be one non-empty line")
num = r"(0|[1-9][0-9]*)"
ident = r"[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*"
version = str(spec.get("version") or "")
if not re.fullmatch(r"v%s\.%s\.%s(-%s)?(\+%s)?" % (num, num, num, ident, ident), version):
    bad("spec.version %r is not v-prefixed semantic versioning (vX.Y.Z[-pre][+build])" % version)
platforms = spec.get("platforms") or []
if not platforms:
    bad("spec.platforms is empty")
seen = set()
for i, p in enumerate(platforms):
    where = "spec.platforms[%d]" % i
    for k in ("uri", "sha256", "bin"):
        if not p.get(k):
            bad("%s: %s has to be set" % (where, k))
    if p.get("sha256") and not re.fullmatch(r"[a-f0-9]{64}", str(p["sha256"])):
        bad("%s: sha256 %r is not 64 lowercase hex digits" % (where, p["sha256"]))
    files = p.get("files")
    if files is not None:
        if not files:
            bad("%s: files has to be absent or non-empty" % where)
        for f in files or []:
            if not f.get("from") or not f.get("to"):
                bad("%s: a files entry without from or to: %r" % (where, f))
    sel = p.get("selector")
    if not sel or (not sel.get("matchLabels") and not sel.get("matchExpressions")):
        bad("%s: no selector (or an empty one)" % where)
        continue
    keys = list((sel.get("matchLabels") or {}).keys()) + [e.get("key") for e in sel.get("matchExpressions") or []]
    for k in keys:
        if k not in ("os", "arch"):
            bad("%s: selector key %r is not supported (os, arch)" % (where, k))
    key = repr(sorted((sel.get("matchLabels") or {}).items()))
    if key in seen:
        bad("%s: a second platform with the selector %s" % (where, key))
    seen.add(key)

# The archives: each described by exactly one platform, by name, arch and digest.
for a in archives:
    base = a.rsplit("/", 1)[-1]
    mt = re.fullmatch(r"kubectl-headroom-.+-(linux)-(amd64|arm64)\.tar\.gz", base)
    ps = [p for p in platforms if str(p.get("uri", "")).endswith("/" + base)]
    if len(ps) != 1:
        bad("%s: %d platforms name it" % (base, len(ps)))
        continue
    p = ps[0]
    if mt and (p.get("selector") or {}).get("matchLabels") != {"os": mt.group(1), "arch": mt.group(2)}:
        bad("%s: its platform's selector is %r" % (base, p.get("selector")))
    digest = hashlib.sha256(open(a, "rb").read()).hexdigest()
    if p.get("sha256") != digest:
        bad("%s: sha256 %s in the manifest, %s in the file" % (base, p.get("sha256"), digest))
    with tarfile.open(a, "r:gz") as t:
        members = t.getmembers()
    odd = [x.name for x in members if not (x.isfile() or x.isdir())]
    if odd:
        bad("%s: krew extracts only files and directories, not %s" % (base, ", ".join(odd[:5])))
    bins = [x for x in members if re.sub(r"^\./", "", x.name) == p.get("bin") and x.isfile()]
    if not bins or not bins[0].mode & 0o111:
        bad("%s: no executable %s at its top" % (base, p.get("bin")))

for e in errors:
    print("%s: %s" % (path, e), file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

base_url="" version="" out="" check_only=""
archives=()
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base_url=${2:?--base-url needs a URL}; shift 2 ;;
    --version) version=${2:?--version needs a version}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --check) check_only=${2:?--check needs a file}; shift 2 ;;
    -*) die "unknown option '$1' (see the header of $0)" ;;
    *) archives+=("$1"); shift ;;
  esac
done
command -v python3 >/dev/null || die "python3 not found (scripts/setup.sh installs it)"
python3 -c 'import yaml' 2>/dev/null || die "python3-yaml not found (scripts/setup.sh installs it)"
if [ -n "$check_only" ]; then
  check "$check_only" || die "$check_only breaks krew's manifest rules (above)"
  exit 0
fi
[ -n "$base_url" ] && [ -n "$version" ] && [ "${#archives[@]}" -gt 0 ] ||
  die "--base-url, --version and at least one archive are required (see the header of $0)"
version=${version#v}
tag=${version//+/-}
base_url=${base_url%/}
[ -f "$TEMPLATE" ] || die "no template $TEMPLATE"

# One platform per archive, in the order of their architectures.
declare -A by_arch=()
for a in "${archives[@]}"; do
  [ -f "$a" ] || die "no archive $a"
  n=$(basename "$a")
  [[ "$n" =~ ^kubectl-headroom-(.+)-linux-(amd64|arm64)\.tar\.gz$ ]] ||
    die "$n is not named kubectl-headroom-<tag>-linux-<amd64|arm64>.tar.gz"
  [ "${BASH_REMATCH[1]}" = "$tag" ] || die "$n is of version ${BASH_REMATCH[1]}, not $tag (--version $version)"
  arch=${BASH_REMATCH[2]}
  [ -z "${by_arch[$arch]:-}" ] || die "two archives for linux/$arch: ${by_arch[$arch]}, $a"
  by_arch[$arch]=$a
done

tmp=$(mktemp "${TMPDIR:-/tmp}/headroom.yaml.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  echo "# headroom.yaml — the krew manifest of kube-headroom v$version, written by"
  echo "# scripts/release/krew-manifest.sh from plugins/headroom.yaml. Install with"
  echo "#   kubectl krew install --manifest=headroom.yaml"
  # The template minus its header comment and its platforms; spec.version stamped.
  awk -v v="v$version" '
    !body && /^#/ { next }
    { body = 1 }
    /^  platforms:/ { print; exit }
    /^  version: / { print "  version: " v; next }
    { print }' "$TEMPLATE"
  for arch in $(printf '%s\n' "${!by_arch[@]}" | LC_ALL=C sort); do
    a=${by_arch[$arch]}
    cat <<EOF
  - selector:
      matchLabels:
        os: linux
        arch: $arch
    uri: $base_url/$(basename "$a")
    sha256: "$(sha256sum "$a" | cut -d' ' -f1)"
    files:
    - from: "*"
      to: "."
    bin: kubectl-headroom
EOF
  done
} >"$tmp"
grep -q '^  platforms:$' "$tmp" || die "$TEMPLATE has no '  platforms:' line"
check "$tmp" "${archives[@]}" || die "the manifest breaks krew's rules (above)"
if [ -n "$out" ]; then
  cp "$tmp" "$out"
else
  cat "$tmp"
fi
